/**
 * The AppClusterBinding reconcile: Klutch's steps, in Klutch's order, each against narrow dependencies (so the whole
 * reconcile is unit-tested with plain functions); the status is computed as one value and committed once at the end.
 *
 *   1. SecretValid: the kubeconfig Secret exists in the AppClusterBinding's own namespace, read by the name it gives
 *      (never listed), is of type Opaque and holds a usable kubeconfig (no exec, local files, proxy or TLS off:
 *      exports/bind-api/app-cluster-kubeconfig.ts). Nothing else until then.
 *   2. AppClusterAccess (ours): the kubeconfig reaches the app cluster and may do what the konnector needs there
 *      (SelfSubjectAccessReviews of lib/app-cluster-access.ts): a kubeconfig need not be cluster-admin, and one that
 *      lacks a permission is refused with the permissions named. Unreachable: reported, retried with backoff.
 *   3. The consumer, provisioned as an OIDC bind provisions one (provision/consumer.ts), its identity recorded on the
 *      ClusterBinding so export requests are judged by the same rule.
 *   4. RootNamespace (ours): the binding root namespace, named injectively and never one another AppClusterBinding
 *      holds (app-cluster-binding.root.ts), kept in status.rootNamespace: ServiceAccount and Role `klutch-binder`, a
 *      NetworkPolicy, the app cluster's kubeconfig and the provider kubeconfig copied in.
 *   5. Per API of spec.apiExports (condition `<resource>.<group>`): a template offers it; mayBind allows the
 *      AppClusterBinding's identity (refused: condition, metric, audit line); the app cluster allows it; the export
 *      (an APIServiceExportRequest, the same path as kubectl bind's); then its APIServiceBinding in the root namespace,
 *      whose Ready the konnector reports.
 *   6. KonnectorDeployed: Deployment `konnector-<name>` with Klutch's arguments (spec.konnector.deploy) and the
 *      overrides that pass app-cluster-binding.overrides.ts; refused ones deploy nothing.
 *   Ready: all of them.
 *
 * Unbinding strands nothing: an API dropped from apiExports loses its APIServiceBinding first (the konnector, still
 * running, deletes the app objects, their provider copies and the CRD, then lets the binding go), and only then its
 * export. Deleting the AppClusterBinding does the same for every API, then removes the konnector, the consumer and
 * the root namespace, and last its finalizer. Whatever it deletes carries its uid (or, made before the uid label, its
 * namespace and name).
 */
import type { V1Deployment, V1Secret } from '@kubernetes/client-node';
import { backoffDelay, type ReconcileResult, type Warn } from '../../controller';
import {
  BIND_API_VERSION,
  Kinds,
  KUBECONFIG_SECRET_KEY,
  READY_CONDITION,
  sameConditions,
  setCondition,
  type APIServiceBinding,
  type AppClusterBinding,
  type AppClusterBindingStatus,
  type Condition,
  type ConditionInput,
  type PermissionClaim,
} from '../../exports/bind-api';
import { checkAppClusterKubeconfig, type AppClusterKubeconfig } from '../../exports/bind-api/app-cluster-kubeconfig';
import {
  APP_CLUSTER_ROLE,
  boundApiChecks,
  CONTROL_PLANE_KONNECTOR_BASE,
  describeCheck,
  type AccessCheck,
} from '../../lib/app-cluster-access';
import { apiName, mayBind, type BindIdentity, type DefaultBindPolicy } from '../authz/bind-policy';
import type { Refusal } from '../authz/refusals';
import type { Exportable } from '../exportable';
import { BINDER } from '../provision/rbac';
import {
  acbGroup,
  acbIdentity,
  acbSubject,
  ACB_FINALIZER,
  konnectorArgs,
  konnectorDeployment,
  konnectorName,
  rootBinding,
} from './app-cluster-binding.objects';
import { vetOverrides, type KonnectorPolicy } from './app-cluster-binding.overrides';
import { AcbLabels, chooseRoot, NOT_FOR_AN_ACB, owns, rootCandidates } from './app-cluster-binding.root';
import { releaseDoc } from '../../lib/version';

/** Where an operator reads how to give the app cluster's kubeconfig that ClusterRole (the release's app-cluster/control-plane-konnector/clusterrole.yaml). */
const APP_CLUSTER_ROLE_DOC = releaseDoc('docs/app-cluster-binding.md');

const AcbConditions = {
  SecretValid: 'SecretValid',
  KonnectorDeployed: 'KonnectorDeployed',
  /** Ours: the app cluster is reachable with the kubeconfig, which may do what the konnector needs there. */
  AppClusterAccess: 'AppClusterAccess',
  /** Ours: the binding root namespace is this AppClusterBinding's (not another's). */
  RootNamespace: 'RootNamespace',
  /** Ours, only while False: the namespace already has as many AppClusterBindings as the operator allows. */
  WithinLimit: 'WithinLimit',
  Ready: READY_CONDITION,
} as const;

/** The state of an API's export in the consumer's cluster namespace. */
export type ExportState =
  | { readonly state: 'exported'; readonly claims: readonly PermissionClaim[] }
  | { readonly state: 'requested' }
  | { readonly state: 'failed'; readonly message: string; readonly reason?: string }
  | { readonly state: 'none' };

export type AppAccess = { readonly missing: readonly string[] } | { readonly unreachable: string };

/** The metadata of an object the controller may delete: whose it is, and its uid (the delete's precondition). */
export interface OwnedMeta {
  readonly uid?: string;
  readonly labels?: Record<string, string>;
}

export interface AcbDeps {
  readonly defaultBindPolicy: DefaultBindPolicy;
  /** --konnector-image, --konnector-allowed-images and --konnector-max-resources. */
  readonly konnector: KonnectorPolicy;
  /** The TCP ports the root namespaces' NetworkPolicy lets konnectors reach (--konnector-api-ports, --external-address's). */
  readonly apiPorts: readonly number[];
  /** How many AppClusterBindings of one namespace are bound (--max-app-cluster-bindings); the oldest first. */
  readonly maxPerNamespace: number;
  /** The AppClusterBindings of a namespace, as cached. */
  peers(namespace: string): readonly AppClusterBinding[];
  readSecret(namespace: string, name: string): Promise<V1Secret | undefined>;
  /** The template and CRD exporting an API, if any. */
  exportable(group: string, resource: string): Promise<Exportable | undefined>;
  /** Which of `checks` the app cluster refuses the kubeconfig, or why it cannot be asked. */
  appAccess(kubeconfig: AppClusterKubeconfig, checks: readonly AccessCheck[]): Promise<AppAccess>;
  /** Finds or makes the consumer (provisionConsumer) and records who bound; its cluster namespace. */
  provision(identity: string, who: BindIdentity & { issuer: string }): Promise<string>;
  /** The consumer's cluster namespace, if it exists (for deletion). */
  findConsumer(identity: string): Promise<string | undefined>;
  /** The provider kubeconfig Secret's data in the cluster namespace (written by provisioning). */
  providerKubeconfig(clusterNamespace: string): Promise<Record<string, string> | undefined>;
  /** A namespace's metadata, if it exists. */
  namespace(name: string): Promise<OwnedMeta | undefined>;
  /**
   * Namespace (created, or refused when another's: a race lost), NetworkPolicy, ServiceAccount, Role and RoleBinding,
   * and the two kubeconfig Secrets in the root namespace.
   */
  ensureRoot(
    acb: AppClusterBinding,
    root: string,
    appKubeconfig: Record<string, string>,
    providerKubeconfig: Record<string, string>,
  ): Promise<void>;
  /** The labelled APIServiceBindings of the root namespace. */
  bindings(rootNamespace: string): readonly APIServiceBinding[];
  applyBinding(b: APIServiceBinding): Promise<void>;
  deleteBinding(namespace: string, name: string): Promise<void>;
  exportState(clusterNamespace: string, name: string): ExportState;
  /** The names of the APIServiceExports in the cluster namespace. */
  exportNames(clusterNamespace: string): readonly string[];
  requestExport(clusterNamespace: string, group: string, resource: string): Promise<void>;
  deleteExport(clusterNamespace: string, name: string): Promise<void>;
  applyDeployment(d: V1Deployment): Promise<void>;
  deployment(namespace: string, name: string): Promise<OwnedMeta | undefined>;
  /** Deletes it if it still has this uid. */
  deleteDeployment(namespace: string, name: string, uid?: string): Promise<void>;
  /** Deletes it if it still has this uid (given for a root namespace). */
  deleteNamespace(name: string, uid?: string): Promise<void>;
  setFinalizer(acb: AppClusterBinding, present: boolean): Promise<void>;
  writeStatus(acb: AppClusterBinding, status: AppClusterBindingStatus): Promise<void>;
  refused(r: Refusal): void;
  /** A Warning Event on the AppClusterBinding (`kubectl describe`), for a condition that has just turned False. */
  warn?: Warn;
  /** Consecutive failures to reach this AppClusterBinding's app cluster (for the backoff); reset on success. */
  failures: Map<string, number>;
}

/** --max-app-cluster-bindings' default: a team's app clusters, each a konnector on the control plane. */
export const MAX_APP_CLUSTER_BINDINGS = 20;
const CHECK_AGAIN_MS = 60_000;
const WAIT_MS = 2_000;
/** Backoff for an unreachable app cluster: 5 s doubling to 5 min. */
const unreachableBackoffMs = (failures: number): number => backoffDelay(failures - 1, { baseMs: 5_000, maxMs: 300_000 });

type Input = ConditionInput;
const ok = (type: string, reason: string, message?: string): Input => ({ type, status: 'True', reason, ...(message ? { message } : {}) });
const no = (type: string, reason: string, message: string, severity: Condition['severity'] = 'Error'): Input => ({
  type,
  status: 'False',
  reason,
  message,
  severity,
});
const unknown = (type: string, reason: string, message: string): Input => ({ type, status: 'Unknown', reason, message });

/** Whether `a` was made before `b` (by creation time, then name: a total order every reconcile agrees on). */
function bornBefore(a: AppClusterBinding, b: AppClusterBinding): boolean {
  const [ta, tb] = [a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? ''].map((t) => new Date(t).getTime() || 0);
  return ta !== tb ? ta! < tb! : (a.metadata.name ?? '') < (b.metadata.name ?? '');
}

/** The names of the APIs an AppClusterBinding asks for (`<resource>.<group>`), each once. */
function wantedApis(acb: AppClusterBinding): { group: string; resource: string; name: string }[] {
  const seen = new Map<string, { group: string; resource: string; name: string }>();
  for (const a of acb.spec.apiExports ?? []) {
    const group = a.group ?? '';
    seen.set(`${a.resource}.${group}`, { group, resource: a.resource, name: `${a.resource}.${group}` });
  }
  return [...seen.values()];
}

export async function reconcileAppClusterBinding(d: AcbDeps, acb: AppClusterBinding, now = new Date()): Promise<ReconcileResult> {
  const key = `${acb.metadata.namespace}/${acb.metadata.name}`;
  if (acb.metadata.deletionTimestamp) return remove(d, acb);
  const conds: Input[] = [];
  let chosen: string | undefined;
  const done = async (requeueAfterMs: number) => {
    await commit(d, acb, conds, now, chosen);
    return { requeueAfterMs };
  };
  const pendingRest = (why: string) => {
    conds.push(unknown(AcbConditions.AppClusterAccess, 'Waiting', why));
    conds.push(unknown(AcbConditions.KonnectorDeployed, 'Waiting', why));
  };

  // 0. The namespace's share of the control plane: each AppClusterBinding runs a konnector there, so a team binds at
  // most d.maxPerNamespace app clusters, the oldest first. One bound already (it has its root namespace: in its
  // status, or labelled as its own by an earlier release or by Klutch) stays bound whatever the limit became:
  // unbinding would delete its app cluster's claims and their databases.
  if (!acb.status?.rootNamespace) {
    const older = d
      .peers(acb.metadata.namespace!)
      .filter((p) => p.metadata.uid !== acb.metadata.uid && !p.metadata.deletionTimestamp && bornBefore(p, acb));
    if (older.length >= d.maxPerNamespace && !(await ownRoot(d, acb))) {
      conds.push(
        no(
          AcbConditions.WithinLimit,
          'TooManyAppClusterBindings',
          `namespace ${acb.metadata.namespace} has ${older.length} older AppClusterBindings and the platform operator allows ${d.maxPerNamespace} (the backend's --max-app-cluster-bindings): each runs a konnector on the control plane. Delete one you no longer need, or ask the operator for more; this one is bound once it is within the limit`,
        ),
      );
      conds.push(unknown(AcbConditions.SecretValid, 'Waiting', 'waiting to be within the limit of AppClusterBindings'));
      pendingRest('waiting to be within the limit of AppClusterBindings');
      return done(CHECK_AGAIN_MS);
    }
  }

  // 1. SecretValid.
  const secret = await validSecret(d, acb);
  if (!secret.ok) {
    conds.push(no(AcbConditions.SecretValid, secret.reason, secret.message));
    pendingRest('waiting for a valid kubeconfig Secret');
    return done(CHECK_AGAIN_MS);
  }
  conds.push(ok(AcbConditions.SecretValid, 'SecretValid'));
  // The root namespace's NetworkPolicy lets the konnector reach only the operator's API ports.
  const port = Number(new URL(secret.kubeconfig.server).port || 443);
  if (!d.apiPorts.includes(port)) {
    conds.push(
      no(
        AcbConditions.AppClusterAccess,
        'PortNotAllowed',
        `the app cluster's API server ${secret.kubeconfig.server} (Secret ${acb.metadata.namespace}/${acb.spec.kubeconfigSecretRef.name}) listens on port ${port}, which the NetworkPolicy of binding root namespaces does not let the konnector reach (ports ${d.apiPorts.join(', ')}); ask the platform operator to add ${port} to the backend's --konnector-api-ports`,
      ),
    );
    conds.push(unknown(AcbConditions.KonnectorDeployed, 'Waiting', 'waiting for an app cluster port the konnector may reach'));
    return done(CHECK_AGAIN_MS);
  }

  // 2. The app cluster: reachable, and what the konnector needs there allowed.
  const apis = wantedApis(acb);
  const found = new Map<string, Exportable | undefined>();
  for (const a of apis) found.set(a.name, await d.exportable(a.group, a.resource));
  const checks = new Map<string, AccessCheck[]>(
    apis.map((a) => [
      a.name,
      // With claims: also that the kubeconfig's user is under the copies-only policy (konnector/deploy/app-cluster-role.ts).
      boundApiChecks(
        { group: a.group, resource: a.resource, claimed: claimedOf(found.get(a.name)?.template.spec.permissionClaims) },
        APP_CLUSTER_ROLE,
      ),
    ]),
  );
  const access = await d.appAccess(secret.kubeconfig, [...CONTROL_PLANE_KONNECTOR_BASE, ...[...checks.values()].flat(), EVERYTHING]);
  if ('unreachable' in access) {
    const n = (d.failures.get(key) ?? 0) + 1;
    d.failures.set(key, n);
    const wait = unreachableBackoffMs(n);
    conds.push(
      no(
        AcbConditions.AppClusterAccess,
        'Unreachable',
        // No attempt count or time in it: an unchanged message is no write, so no event that would cut the backoff short.
        `cannot reach the app cluster ${secret.kubeconfig.server}: ${access.unreachable}; retrying with backoff (5s doubling to 5m)`,
      ),
    );
    conds.push(unknown(AcbConditions.KonnectorDeployed, 'Waiting', 'waiting for the app cluster'));
    return done(wait);
  }
  d.failures.delete(key);
  const baseMissing = access.missing.filter((m) => CONTROL_PLANE_KONNECTOR_BASE.some((c) => sameCheck(m, c)));
  if (baseMissing.length) {
    conds.push(
      no(
        AcbConditions.AppClusterAccess,
        'Forbidden',
        `the kubeconfig in Secret ${acb.metadata.namespace}/${acb.spec.kubeconfigSecretRef.name} may not ${baseMissing.join(', ')} in the app cluster; bind its user there to ClusterRole ${APP_CLUSTER_ROLE} (${APP_CLUSTER_ROLE_DOC}) (it need not be cluster-admin)`,
      ),
    );
    conds.push(unknown(AcbConditions.KonnectorDeployed, 'Waiting', 'waiting for access to the app cluster'));
    return done(CHECK_AGAIN_MS);
  }
  // Taken, but said: a kubeconfig that may do everything is stored on the control plane, and the copies-only policy
  // (konnector/deploy/access.ts) holds no user that may do everything.
  const clusterAdmin = !access.missing.some((m) => sameCheck(m, EVERYTHING));
  conds.push(
    clusterAdmin
      ? ok(
          AcbConditions.AppClusterAccess,
          'ClusterAdmin',
          `${secret.kubeconfig.server}: the kubeconfig in Secret ${acb.metadata.namespace}/${acb.spec.kubeconfigSecretRef.name} may do everything in the app cluster; it is stored on the control plane, where whoever reads the binding root namespace's Secrets gets all of the app cluster, and the konnector's copies-only policy does not hold it. Bind a user of its own to ClusterRole ${APP_CLUSTER_ROLE} (${APP_CLUSTER_ROLE_DOC}) instead`,
        )
      : ok(AcbConditions.AppClusterAccess, 'Allowed', secret.kubeconfig.server),
  );

  // 4 first: a root namespace another AppClusterBinding holds stops everything, before a consumer is made for nothing.
  const choice = await chooseRoot(acb, async (n) => {
    const m = await d.namespace(n);
    return m ? (m.labels ?? {}) : null;
  });
  if ('taken' in choice) {
    conds.push(no(AcbConditions.RootNamespace, 'Taken', takenMessage(acb, choice.taken, choice.owner)));
    conds.push(unknown(AcbConditions.KonnectorDeployed, 'Waiting', 'waiting for a root namespace of its own'));
    return done(CHECK_AGAIN_MS);
  }
  const root = (chosen = choice.root);
  conds.push(ok(AcbConditions.RootNamespace, 'Owned', `namespace ${root}`));

  // 3. The consumer, as an OIDC bind makes it; 4. the root namespace.
  const identity: BindIdentity = { subject: acbSubject(acb), groups: [acbGroup(acb.metadata.namespace!)] };
  if (!acb.metadata.finalizers?.includes(ACB_FINALIZER)) await d.setFinalizer(acb, true);
  const clusterNs = await d.provision(acbIdentity(acb), { ...identity, issuer: 'appclusterbinding' });
  const provider = await d.providerKubeconfig(clusterNs);
  if (!provider) {
    conds.push(unknown(AcbConditions.KonnectorDeployed, 'Waiting', `waiting for the kubeconfig Secret of cluster namespace ${clusterNs}`));
    return done(WAIT_MS);
  }
  await d.ensureRoot(acb, root, secret.data, provider);

  // 5. The APIs.
  let requeue = CHECK_AGAIN_MS;
  const bindings = new Map(ownBindings(d, acb, root).map((b) => [b.metadata.name!, b]));
  for (const a of apis) {
    const c = await apiCondition(d, acb, a, {
      exportable: found.get(a.name),
      identity,
      missing: access.missing,
      checks: checks.get(a.name)!,
      clusterNs,
      root,
      binding: bindings.get(a.name),
    });
    conds.push(c.condition);
    if (c.status !== 'True') requeue = Math.min(requeue, c.retryMs ?? WAIT_MS * 5);
  }
  // APIs no longer asked for: the binding first (the konnector unbinds it), the export once the binding is gone.
  const wanted = new Set(apis.map((a) => a.name));
  for (const [name, b] of bindings) {
    if (wanted.has(name)) continue;
    if (!b.metadata.deletionTimestamp) await d.deleteBinding(root, name);
    requeue = WAIT_MS;
  }
  for (const name of d.exportNames(clusterNs)) {
    if (wanted.has(name) || bindings.has(name)) continue;
    await d.deleteExport(clusterNs, name);
  }

  // 6. The konnector, with the overrides the operator allows; refused: none runs (not even one made before).
  const vetted = vetOverrides(acb.spec.konnector?.overrides, d.konnector);
  if (acb.spec.konnector?.deploy && 'problems' in vetted) {
    await deleteOwnDeployment(d, acb, root);
    conds.push(
      no(
        AcbConditions.KonnectorDeployed,
        'OverridesRefused',
        `no konnector runs for this app cluster until spec.konnector.overrides is fixed: ${vetted.problems.join('; ')}`,
      ),
    );
  } else if (acb.spec.konnector?.deploy && !('problems' in vetted)) {
    await d.applyDeployment(konnectorDeployment(acb, root, vetted));
    conds.push(ok(AcbConditions.KonnectorDeployed, 'Deployed', `Deployment ${root}/${konnectorName(acb)}`));
  } else {
    conds.push(
      no(
        AcbConditions.KonnectorDeployed,
        'NotRequested',
        `spec.konnector.deploy is not true, so no konnector runs for this app cluster: set spec.konnector.deploy to true, or run one yourself in namespace ${root} as ServiceAccount ${BINDER} with the flags ${konnectorArgs(acb, root).join(' ')} (${releaseDoc('docs/app-cluster-binding.md')})`,
        'Info',
      ),
    );
  }
  return done(requeue);
}

/** What the condition of one API is judged from. */
interface ApiConditionInputs {
  /** The API's template and CRD, when it is exported at all. */
  readonly exportable: Exportable | undefined;
  readonly identity: BindIdentity;
  /** What the app cluster's kubeconfig may not do (its access review), and what this API needs of it. */
  readonly missing: readonly string[];
  readonly checks: readonly AccessCheck[];
  /** The consumer's cluster namespace on the control plane, and the binding root namespace. */
  readonly clusterNs: string;
  readonly root: string;
  /** The API's APIServiceBinding in the root namespace, if made. */
  readonly binding: APIServiceBinding | undefined;
}

/** The condition of one API, and whether to look again soon. */
async function apiCondition(
  d: AcbDeps,
  acb: AppClusterBinding,
  a: { group: string; resource: string; name: string },
  o: ApiConditionInputs,
): Promise<{ condition: Input; status: string; retryMs?: number }> {
  const { exportable, identity, missing, checks, clusterNs, root, binding } = o;
  const out = (condition: Input, retryMs?: number) => ({ condition, status: condition.status, ...(retryMs ? { retryMs } : {}) });
  if (!exportable)
    return out(
      no(
        a.name,
        'NotExported',
        `no APIServiceExportTemplate exports ${a.name} (or its CRD is missing); ask the platform operator which APIs are offered`,
      ),
      CHECK_AGAIN_MS,
    );
  const decision = mayBind(identity, exportable.template, d.defaultBindPolicy);
  if (!decision.allowed) {
    const old = acb.status?.conditions?.find((c) => c.type === a.name);
    // Counted and audited once per refusal, not on every look.
    if (!(old?.reason === 'Forbidden' && old.message === decision.message)) {
      const t = exportable.template.metadata;
      d.refused({
        path: 'appclusterbinding',
        api: apiName(exportable.template),
        template: `${t.namespace}/${t.name}`,
        reason: decision.reason,
        message: decision.message,
        identity: { ...identity, issuer: 'appclusterbinding' },
        clusterId: `${acb.metadata.namespace}/${acb.metadata.name}`,
      });
    }
    return out(no(a.name, 'Forbidden', decision.message), CHECK_AGAIN_MS);
  }
  const lacking = missing.filter((m) => checks.some((c) => sameCheck(m, c)));
  if (lacking.length)
    return out(
      no(
        a.name,
        'AppClusterForbidden',
        `the app cluster's kubeconfig may not ${lacking.join(', ')}; bind its user to ClusterRole ${APP_CLUSTER_ROLE} (${APP_CLUSTER_ROLE_DOC}), which covers every API of the catalog`,
      ),
      CHECK_AGAIN_MS,
    );
  const exp = d.exportState(clusterNs, a.name);
  if (exp.state === 'failed') return out(no(a.name, exp.reason ?? 'ExportFailed', exp.message), CHECK_AGAIN_MS);
  if (exp.state === 'none') await d.requestExport(clusterNs, a.group, a.resource);
  if (exp.state !== 'exported')
    return out(unknown(a.name, 'Exporting', `waiting for the APIServiceExport in cluster namespace ${clusterNs}`));
  const want = rootBinding(acb, root, a.name, exp.claims);
  // A binding made before the uid label gets it.
  if (
    !binding ||
    binding.metadata.labels?.[AcbLabels.uid] !== acb.metadata.uid ||
    JSON.stringify(binding.spec.permissionClaims ?? []) !== JSON.stringify(want.spec.permissionClaims ?? [])
  )
    await d.applyBinding(want);
  const ready = binding?.status?.conditions?.find((c) => c.type === READY_CONDITION);
  if (ready?.status === 'True') return out(ok(a.name, 'Bound', `APIServiceBinding ${want.metadata.namespace}/${a.name} is Ready`));
  return out(
    ready
      ? no(
          a.name,
          ready.reason ?? 'NotReady',
          `APIServiceBinding ${want.metadata.namespace}/${a.name}: ${ready.message ?? 'not ready'}`,
          ready.severity || 'Warning',
        )
      : unknown(a.name, 'Binding', `waiting for the konnector to report on APIServiceBinding ${want.metadata.namespace}/${a.name}`),
  );
}

/** Deletion, in the order that strands nothing (see the top of the file), of its own objects only. */
async function remove(d: AcbDeps, acb: AppClusterBinding): Promise<ReconcileResult> {
  if (!acb.metadata.finalizers?.includes(ACB_FINALIZER)) return undefined;
  const root = await ownRoot(d, acb);
  const left = root ? ownBindings(d, acb, root.name) : [];
  if (root && left.length) {
    for (const b of left) if (!b.metadata.deletionTimestamp) await d.deleteBinding(root.name, b.metadata.name!);
    await commit(
      d,
      acb,
      [
        no(
          READY_CONDITION,
          'Deleting',
          `unbinding: waiting for the konnector to delete the app cluster's objects of ${left.map((b) => b.metadata.name).join(', ')} and their provider copies`,
          'Info',
        ),
      ],
      new Date(),
    );
    return { requeueAfterMs: WAIT_MS };
  }
  if (root) await deleteOwnDeployment(d, acb, root.name);
  const clusterNs = await d.findConsumer(acbIdentity(acb));
  if (clusterNs) await d.deleteNamespace(clusterNs);
  if (root) await d.deleteNamespace(root.name, root.uid);
  await d.setFinalizer(acb, false);
  return undefined;
}

/** The root namespace that is this AppClusterBinding's, if one of its names exists and carries its uid. */
async function ownRoot(d: AcbDeps, acb: AppClusterBinding): Promise<{ name: string; uid?: string } | undefined> {
  const c = rootCandidates(acb);
  for (const name of new Set([acb.status?.rootNamespace, c.klutch, c.legacy, c.hashed])) {
    if (!name || ![c.klutch, c.legacy, c.hashed].includes(name)) continue;
    const m = await d.namespace(name);
    if (m && owns(m.labels, acb)) return { name, ...(m.uid ? { uid: m.uid } : {}) };
  }
  return undefined;
}

/** The APIServiceBindings of the root namespace that are this AppClusterBinding's. */
const ownBindings = (d: AcbDeps, acb: AppClusterBinding, root: string): readonly APIServiceBinding[] =>
  d.bindings(root).filter((b) => owns(b.metadata.labels, acb));

async function deleteOwnDeployment(d: AcbDeps, acb: AppClusterBinding, root: string): Promise<void> {
  const m = await d.deployment(root, konnectorName(acb));
  if (m && owns(m.labels, acb)) await d.deleteDeployment(root, konnectorName(acb), m.uid);
}

function takenMessage(acb: AppClusterBinding, taken: string, owner: string): string {
  const fix =
    owner === NOT_FOR_AN_ACB
      ? `delete namespace ${taken} if it is unused, or create this AppClusterBinding under another name`
      : 'create this AppClusterBinding under another name (the root namespace is derived from its namespace and name), or delete the other one first';
  return `the binding root namespace ${taken} belongs to ${owner}, not to AppClusterBinding ${acb.metadata.namespace}/${acb.metadata.name}: nothing is written there; ${fix}`;
}

async function commit(d: AcbDeps, acb: AppClusterBinding, inputs: Input[], now: Date, rootNamespace?: string): Promise<void> {
  let conditions = acb.status?.conditions?.filter((c) => inputs.some((i) => i.type === c.type)) ?? [];
  for (const c of inputs) conditions = setCondition(conditions, c, now);
  if (!inputs.some((i) => i.type === READY_CONDITION)) {
    const notReady = conditions.filter(
      (c) => c.status !== 'True' && !(c.type === AcbConditions.KonnectorDeployed && c.reason === 'NotRequested'),
    );
    conditions = setCondition(
      conditions,
      notReady.length
        ? {
            type: READY_CONDITION,
            status: notReady.some((c) => c.status === 'False') ? 'False' : 'Unknown',
            // The reason of the first that failed, not of one waiting for it.
            reason: (notReady.find((c) => c.status === 'False') ?? notReady[0]!).reason ?? 'NotReady',
            message: notReady.map((c) => `${c.type}: ${c.message ?? c.reason ?? c.status}`).join('; '),
          }
        : { type: READY_CONDITION, status: 'True', reason: 'Ready' },
      now,
    );
  }
  const moved = rootNamespace !== undefined && rootNamespace !== acb.status?.rootNamespace;
  if (moved || !sameConditions(conditions, acb.status?.conditions))
    await d.writeStatus(acb, { conditions, ...(rootNamespace ? { rootNamespace } : {}) });
  // What went wrong, once as it happens: a condition (Ready aside, which repeats the others) that turned False or
  // False for another reason. The recorder writes the same warning on the same object once per ten minutes.
  for (const c of conditions) {
    if (c.type === READY_CONDITION || c.status !== 'False') continue;
    const was = acb.status?.conditions?.find((o) => o.type === c.type);
    if (was?.status === 'False' && was.reason === c.reason) continue;
    d.warn?.(
      { apiVersion: BIND_API_VERSION, kind: Kinds.AppClusterBinding, metadata: acb.metadata },
      c.reason ?? c.type,
      `${c.type}: ${c.message ?? c.reason}`,
    );
  }
}

/** The kubeconfig Secret, checked: only in the AppClusterBinding's own namespace (see the decision note). */
async function validSecret(
  d: AcbDeps,
  acb: AppClusterBinding,
): Promise<{ ok: true; kubeconfig: AppClusterKubeconfig; data: Record<string, string> } | { ok: false; reason: string; message: string }> {
  const ref = acb.spec.kubeconfigSecretRef;
  const ns = ref.namespace || acb.metadata.namespace!;
  const where = `Secret ${ns}/${ref.name}`;
  if (ns !== acb.metadata.namespace)
    return {
      ok: false,
      reason: 'SecretNamespaceForbidden',
      message: `spec.kubeconfigSecretRef.namespace "${ns}" is not the AppClusterBinding's namespace "${acb.metadata.namespace}": the backend reads app cluster kubeconfigs only beside their AppClusterBinding (whoever may create one must not make the backend use a Secret they cannot read); move the Secret into ${acb.metadata.namespace}`,
    };
  const s = await d.readSecret(ns, ref.name);
  if (!s)
    return {
      ok: false,
      reason: 'SecretNotFound',
      message: `${where} (spec.kubeconfigSecretRef) does not exist; create it with the app cluster's kubeconfig under key "${ref.key ?? KUBECONFIG_SECRET_KEY}"`,
    };
  // Only a Secret made to hold a kubeconfig: a token Secret (filled in by the token controller), Cluster API's or
  // Crossplane's connection Secrets also carry kubeconfig-shaped keys, and naming one must not make it the konnector's.
  const type = s.type || 'Opaque';
  if (type !== 'Opaque')
    return {
      ok: false,
      reason: 'SecretTypeNotOpaque',
      message: `${where} (spec.kubeconfigSecretRef.name "${ref.name}") is of type ${type}; the backend reads app cluster kubeconfigs only from Secrets of type Opaque: put the kubeconfig into a Secret of its own (kubectl create secret generic <name> -n ${ns} --from-file=${ref.key ?? KUBECONFIG_SECRET_KEY}=<file>) and name that one in spec.kubeconfigSecretRef.name`,
    };
  const key = ref.key ?? KUBECONFIG_SECRET_KEY;
  const raw = s.data?.[key];
  if (!raw)
    return { ok: false, reason: 'KubeconfigMissing', message: `${where} has no key "${key}"; store the app cluster's kubeconfig under it` };
  const check = checkAppClusterKubeconfig(Buffer.from(raw, 'base64').toString('utf8'), `${where} key "${key}"`);
  if (!check.ok) return { ok: false, reason: check.reason, message: check.message };
  return { ok: true, kubeconfig: check, data: { [key]: raw } };
}

const claimedOf = (claims: readonly PermissionClaim[] | undefined): string[] =>
  (claims ?? []).filter((c) => (c.group ?? '') === '' && ['secrets', 'configmaps'].includes(c.resource)).map((c) => c.resource);

/** Whether a missing-access description (describeCheck) names check `c`. */
const sameCheck = (described: string, c: AccessCheck): boolean => described === describeCheck(c);

/** Every verb on every resource: what only a cluster-admin kubeconfig may. */
const EVERYTHING: AccessCheck = { group: '*', resource: '*', verb: '*' };
