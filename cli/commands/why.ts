/**
 * `kubectl bind why <resource>/<name>`: why a claim in this cluster is not Ready, hop by hop — the APIServiceBinding
 * that serves its API, the konnector that carries it (its Lease, its Pods), the claim's own conditions as the control
 * plane sent them back (Crossplane's Synced, the data service's DataServiceReady with the backend's words, and what
 * else the backend reports) — and a last line naming the hop that holds it, with what to do.
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { APIServiceBinding } from '../../exports/bind-api';
import { conditionHold, conditionOrder, saidOf, type ClaimCondition as Condition } from '../../lib/claim-hold';
import { messageOf, statusOf } from '../../lib/kube-errors';
import { bindingsOf, readyOf } from '../binding';
import { CliError, ExitCode } from '../errors';
import type { WhyFlags } from '../flags';
import type { Io } from '../io';
import { appCluster, getOrUndefined, retryBusy, type Cluster } from '../kube';
import { printable } from '../table';
import { KONNECTOR_LEASE, konnectorLease, konnectorRuns } from '../konnector-lease';
import { konnectorTrouble } from '../konnector-pods';

/** One hop of the chain: fine, or what holds the claim there and what to do. */
interface Hop {
  readonly hop: string;
  readonly ok: boolean;
  readonly said: string;
  readonly todo?: string;
}

/**
 * The binding serving `resource` (`postgresqlinstances`, `postgresqlinstance`, the kind, or `<plural>.<group>`).
 * Read cluster-wide; a user who may not do that (a namespace-scoped developer) gets those of the konnector's namespace
 * (where the bindings are) and of the claim's (a konnector may serve only its own namespace).
 */
async function bindingFor(
  app: Cluster,
  resource: string,
  where: { readonly claim: string; readonly konnector: string },
): Promise<{ binding: APIServiceBinding; crd?: V1CustomResourceDefinition } | undefined> {
  let bindings: APIServiceBinding[] = [];
  try {
    bindings = await bindingsOf(app).list();
  } catch (e) {
    if (statusOf(e) === 404) return undefined; // no konnector ever installed: no APIServiceBinding CRD
    if (statusOf(e) !== 403) throw e;
    const namespaces = [...new Set([where.konnector, where.claim])];
    const refused: string[] = [];
    for (const ns of namespaces) {
      try {
        bindings.push(...(await bindingsOf(app).list(ns)));
      } catch (inner) {
        if (statusOf(inner) !== 403) throw inner;
        refused.push(ns);
      }
    }
    if (refused.length === namespaces.length)
      throw new CliError(
        `this user may list apiservicebindings.klutch.anynines.com neither cluster-wide nor in namespace ${refused.join(' or ')}: ${messageOf(e)}`,
        `ask for list on them in the konnector's namespace, or name it with --konnector-namespace`,
        ExitCode.Failed,
        { cause: e },
      );
  }
  const wanted = resource.toLowerCase();
  for (const binding of bindings) {
    const name = binding.metadata.name!;
    // The CRD the konnector installed names the kind and the singular; a user who may not read CRDs gets the plural.
    const crd = (await getOrUndefined(app.crds.readCustomResourceDefinition({ name })).catch(() => undefined)) as
      V1CustomResourceDefinition | undefined;
    const n = crd?.spec.names;
    const names = [name, name.split('.')[0], n?.singular, n?.kind?.toLowerCase(), ...(n?.shortNames ?? [])];
    if (names.includes(wanted)) return { binding, ...(crd ? { crd } : {}) };
  }
  return undefined;
}

/** The konnector of the binding's namespace: running when its Lease is fresh; else why its Pods do not run. */
async function konnectorHop(app: Cluster, namespace: string): Promise<Hop> {
  const lease = await konnectorLease(app, namespace);
  if (konnectorRuns(lease) && lease.age !== undefined)
    return {
      hop: 'konnector',
      ok: true,
      said: `runs in namespace ${namespace} (Lease ${KONNECTOR_LEASE} renewed ${Math.round(lease.age / 1000)} s ago)`,
    };
  const pods = await konnectorTrouble(app.core, namespace).catch((e: unknown) => `its Pods cannot be read: ${messageOf(e)}`);
  const fixPods = `fix what its Pods say (kubectl -n ${namespace} describe deployment konnector), or install it again with kubectl bind <url>`;
  if (lease.unreadable)
    return {
      hop: 'konnector',
      ok: false,
      said: `in namespace ${namespace}: its Lease ${KONNECTOR_LEASE} cannot be read (${lease.unreadable}), so whether it runs is not known${pods ? `; ${pods}` : ''}`,
      todo: `ask for get on leases.coordination.k8s.io in namespace ${namespace}, or have someone who may read it run kubectl bind why${pods ? `; ${fixPods}` : ''}`,
    };
  const lastSeen = lease.age === undefined ? 'has no Lease' : `last renewed its Lease ${Math.round(lease.age / 1000)} s ago`;
  return {
    hop: 'konnector',
    ok: false,
    said: `in namespace ${namespace} ${lastSeen}${pods ? `; ${pods}` : ''}`,
    todo: `nothing goes up or comes back while it does not run: ${fixPods}`,
  };
}

/** One condition of the claim as a hop: what it holds (lib/claim-hold.ts, the konnector's reading too), or fine. */
function claimHop(c: Condition): Hop {
  const said = saidOf(c);
  if (c.status === 'True') return { hop: 'claim', ok: true, said };
  if (c.type === 'Ready')
    return { hop: 'claim', ok: false, said, todo: 'the claim is not Ready yet: the conditions above say what it waits for' };
  const held = conditionHold(c)!;
  return { hop: held.hop, ok: false, said: held.said, todo: held.todo };
}

export async function whyCommand(flags: WhyFlags, io: Io): Promise<number> {
  const app = appCluster(flags, io.env);
  const { resource, name } = flags;
  // As kubectl: the context's namespace unless -n names one.
  const namespace = flags.namespace ?? (app.kc.getContextObject(app.kc.getCurrentContext())?.namespace || 'default');
  const cannot = (what: string, e: unknown) =>
    new CliError(`cannot read ${what} in ${app.server}: ${messageOf(e)}`, 'check --kubeconfig and --context', ExitCode.Failed, {
      cause: e,
    });
  const found = await bindingFor(app, resource, { claim: namespace, konnector: flags.konnectorNamespace }).catch((e: unknown) => {
    throw e instanceof CliError ? e : cannot('the APIServiceBindings', e);
  });
  if (!found)
    throw new CliError(
      `no APIServiceBinding of this cluster serves "${resource}"`,
      'kubectl bind list -A shows what is bound; bind the API with kubectl bind <url>',
      ExitCode.Failed,
    );
  const { binding, crd } = found;
  const bindingName = binding.metadata.name!;
  const [plural, ...groupParts] = bindingName.split('.');
  const group = groupParts.join('.');
  const hops: Hop[] = [];
  const ready = readyOf(binding);
  hops.push(
    ready?.status === 'True'
      ? { hop: 'binding', ok: true, said: `APIServiceBinding ${binding.metadata.namespace}/${bindingName} Ready` }
      : {
          hop: 'binding',
          ok: false,
          said: `APIServiceBinding ${binding.metadata.namespace}/${bindingName} ${ready ? `Ready ${ready.status}${ready.reason ? ` (${ready.reason})` : ''}${ready.message ? `: ${ready.message}` : ''}` : 'has no Ready condition yet'}`,
          todo: 'the binding is not working: its message says why; kubectl bind <url> again renews what it needs',
        },
  );
  hops.push(await konnectorHop(app, binding.metadata.namespace!));
  // The claim, with the version the binding serves here (the CRD's storage version; a user who may not read CRDs
  // gets the claim through the first version the API server lists for the group).
  let claim: { status?: { conditions?: Condition[] } } | undefined;
  try {
    const version = crd?.spec.versions.find((v) => v.storage)?.name ?? crd?.spec.versions[0]?.name ?? 'v1';
    // Tried again on 429: the API server answers it for a moment after the claim's CRD changed (storage re-initializing).
    claim = (await retryBusy(() =>
      getOrUndefined(app.custom.getNamespacedCustomObject({ group, version, namespace, plural: plural!, name })),
    )) as typeof claim | undefined;
  } catch (e) {
    throw cannot(`${plural}.${group} ${namespace}/${name}`, e);
  }
  if (!claim)
    throw new CliError(
      `no ${plural}.${group} ${namespace}/${name} in this cluster`,
      `kubectl get ${plural}.${group} -n ${namespace} lists them`,
    );
  const conditions = claim.status?.conditions ?? [];
  if (!conditions.length)
    hops.push({
      hop: 'claim',
      ok: false,
      said: 'has no status: the control plane has not answered for it yet',
      todo: "the konnector carries the claim up and its status back within seconds when it runs; if it runs, the claim may be refused on the control plane (a quota, a policy): see the konnector's Events on the claim (kubectl describe)",
    });
  // Crossplane's first, then the data service's, then what else the backend reports, then Ready.
  for (const c of [...conditions].sort((a, b) => conditionOrder(a.type) - conditionOrder(b.type))) hops.push(claimHop(c));

  const width = Math.max(...hops.map((h) => h.hop.length));
  const lines = hops.map((h) => `  ${h.ok ? 'ok  ' : 'NOT '} ${h.hop.padEnd(width)}  ${printable(h.said)}`);
  // The first hop that holds it: upstream hops first (the binding and the konnector carry everything else).
  const held = hops.find((h) => !h.ok && h.hop !== 'claim') ?? hops.find((h) => !h.ok);
  const isReady = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  const verdict = !held
    ? 'Ready: nothing holds it.'
    : isReady
      ? `Ready, but the ${held.hop} says: ${printable(held.todo ?? held.said)}`
      : `Held by the ${held.hop}: ${printable(held.todo ?? held.said)}`;
  io.stdout.write(
    `${plural}.${group} ${namespace}/${name}, through APIServiceBinding ${binding.metadata.namespace}/${bindingName}:\n${lines.join('\n')}\n${verdict}\n`,
  );
  return ExitCode.Ok;
}
