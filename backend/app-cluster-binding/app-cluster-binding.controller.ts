/**
 * The AppClusterBinding controller's wiring: informers over AppClusterBindings and the APIServiceBindings it made
 * (labelled), the leader's exports and export requests mapped back to their AppClusterBinding, and the deps of
 * app-cluster-binding.reconcile.ts implemented with the backend's clients. Its informers are its own, so a control
 * plane without the AppClusterBinding CRD (or a backend whose RBAC lacks it) stops only this controller, never the
 * others; likewise an unreachable app cluster delays only its own AppClusterBinding (workers in parallel, a timeout
 * on every call into an app cluster).
 */
import { createHash } from 'node:crypto';
import { AuthorizationV1Api, type KubernetesObject, type V1Secret } from '@kubernetes/client-node';
import { Controller, keepAliveClient, objectKey, runWithInformers, splitKey, watchInformer, type WatchInformer } from '../../controller';
import {
  Annotations,
  BIND_API_VERSION,
  bindObjects,
  bindPath,
  Kinds,
  type APIServiceBinding,
  type APIServiceExportRequest,
  type AppClusterBinding,
} from '../../exports/bind-api';
import { appClusterKubeConfig, type AppClusterKubeconfig } from '../../exports/bind-api/app-cluster-kubeconfig';
import { AccessCache } from '../../lib/access-cache';
import { missingAccess, type AccessCheck } from '../../lib/app-cluster-access';
import { bindRefusals, recordRefusal } from '../authz/refusals';
import { findExportable } from '../exportable';
import { cachedExportables, cachedNamespaces, metadataOnly, type Informed } from '../informers';
import { messageOf, APPLY_PATCH, BindResources, FIELD_MANAGER, isConflict, isNotFound, MERGE_PATCH, statusOf } from '../kube';
import { findClusterNamespace } from '../provision/cluster-namespace';
import { KUBECONFIG_SECRET } from '../provision/kubeconfig';
import { BINDER } from '../provision/rbac';
import {
  acbLabels,
  ACB_FINALIZER,
  APP_KUBECONFIG_SECRET,
  konnectorRole,
  konnectorRoleBinding,
  PROVIDER_KUBECONFIG_SECRET,
  rootNamespaceObject,
  rootNetworkPolicy,
  rootSecret,
  ROOT_NETWORK_POLICY,
} from './app-cluster-binding.objects';
import { AcbLabels, ownership } from './app-cluster-binding.root';
import {
  MAX_APP_CLUSTER_BINDINGS,
  reconcileAppClusterBinding,
  type AcbDeps,
  type AppAccess,
  type ExportState,
} from './app-cluster-binding.reconcile';
import type { ControllerDeps } from '../controllers/deps';
import { KONNECTOR_IMAGE } from '../../lib/version';

/** How long one call into an app cluster may take: a black-holed address must not hold a worker for minutes. */
const APP_CLUSTER_TIMEOUT_MS = 10_000;

/** Runs the controller until `signal` aborts. Needs `d.provision` (the backend's consumer provisioning). */
export async function runAppClusterBindings(d: ControllerDeps, signal: AbortSignal): Promise<void> {
  const provision = d.provision;
  if (!provision) throw new Error('the AppClusterBinding controller needs the consumer provisioning (ControllerDeps.provision)');
  const log = d.log.child({ controller: 'appclusterbindings' });
  const acbs = watchInformer<Informed<AppClusterBinding>>({
    kc: d.clients.kc,
    path: bindPath(BindResources.appClusterBindings),
    log,
  });
  const bindings = watchInformer<Informed<APIServiceBinding>>({
    kc: d.clients.kc,
    path: bindPath(BindResources.bindings),
    labelSelector: AcbLabels.name,
    log,
  });
  const failures = new Map<string, number>();
  /** Refusals already counted and audited, per AppClusterBinding: two reconciles racing their status write count one. */
  const refusals = new Map<string, Set<string>>();
  // Outlives a reconcile (deps are made per reconcile): the app clusters' clients and remembered answers.
  const reviewers = appClusterReviewers();
  const c = new Controller({
    name: 'appclusterbindings',
    workers: 4,
    log: d.log,
    registry: d.registry,
    reconcile: async (key) => {
      const { namespace, name } = splitKey(key);
      const acb = acbs.get(name, namespace);
      if (!acb) return;
      return reconcileAppClusterBinding(deps(d, provision, acbs, bindings, failures, refusals, reviewers), acb);
    },
  });
  const owner = (o: KubernetesObject) => {
    const l = o.metadata?.labels;
    return l?.[AcbLabels.name] && l[AcbLabels.namespace] ? [`${l[AcbLabels.namespace]}/${l[AcbLabels.name]}`] : [];
  };
  // Not on our own status writes: only a change of spec (generation), finalizers or deletion is news; the requeues
  // the reconcile asks for (backoff for an unreachable cluster, the periodic look) do the rest.
  const seen = new Map<string, string>();
  c.watch(acbs, (a, event) => {
    const k = objectKey(a);
    if (event === 'delete') {
      for (const m of [seen, refusals, failures]) m.delete(k);
      // One gone may let a younger one of its namespace within the limit of AppClusterBindings.
      return [k, ...acbs.list(a.metadata.namespace).map((p) => objectKey(p))];
    }
    const sig = JSON.stringify([a.metadata.uid, a.metadata.generation, a.metadata.finalizers, a.metadata.deletionTimestamp]);
    if (seen.get(k) === sig) return [];
    seen.set(k, sig);
    return [k];
  });
  c.watch(bindings, owner);
  // An export or request in an AppClusterBinding's cluster namespace: its identity annotation names it.
  const byClusterNamespace = (o: KubernetesObject) => {
    const id = d.leader.namespaces.get(o.metadata?.namespace ?? '')?.metadata?.annotations?.[Annotations.identity];
    const m = id && /^system:appclusterbinding:([^:]+):([^#]+)#/.exec(id);
    return m ? [`${m[1]}/${m[2]}`] : [];
  };
  c.watch(d.leader.exports, byClusterNamespace);
  c.watch(d.leader.exportRequests, byClusterNamespace);
  // A template or CRD appearing may let a waiting API go on.
  const all = () => acbs.list().map((a) => objectKey(a));
  c.watch(d.serving.templates, all);
  // A rotated kubeconfig Secret beside an AppClusterBinding is picked up (and copied into the root namespace).
  // Metadata only (no Secret's data in the backend's memory); the data is read by name when reconciling.
  const secrets = watchInformer<V1Secret>({ kc: metadataOnly(d.clients.kc), path: '/api/v1/secrets', log });
  c.watch(secrets, (s) =>
    acbs
      .list(s.metadata?.namespace)
      .filter((a) => a.spec.kubeconfigSecretRef.name === s.metadata?.name)
      .map((a) => objectKey(a)),
  );
  const informers = [acbs, bindings, secrets] as WatchInformer<KubernetesObject>[];
  await runWithInformers({ informers, controllers: [c] }, signal);
}

function deps(
  d: ControllerDeps,
  provision: NonNullable<ControllerDeps['provision']>,
  acbInformer: WatchInformer<Informed<AppClusterBinding>>,
  bindings: WatchInformer<Informed<APIServiceBinding>>,
  failures: Map<string, number>,
  refusals: Map<string, Set<string>>,
  reviewers: AppClusterReviewers,
): AcbDeps {
  const c = d.clients;
  const acbs = bindObjects<AppClusterBinding>(c.custom, BindResources.appClusterBindings);
  const apiBindings = bindObjects<APIServiceBinding>(c.custom, BindResources.bindings);
  const exports = bindObjects(c.custom, BindResources.exports);
  const exportRequests = bindObjects<APIServiceExportRequest>(c.custom, BindResources.exportRequests);
  const ignoreNotFound = (e: unknown) => {
    if (!isNotFound(e)) throw e;
  };
  // The control plane as konnectors reach it (the provider kubeconfig's server) is always among the ports.
  const apiPorts = [...new Set([...(d.konnectorApiPorts ?? [443, 6443]), Number(new URL(d.target.server).port || 443)])];
  return {
    defaultBindPolicy: d.defaultBindPolicy,
    konnector: {
      image: d.konnectorImage ?? KONNECTOR_IMAGE,
      allowed: d.konnectorAllowedImages ?? [],
      ...(d.konnectorMaxResources ? { maxResources: d.konnectorMaxResources } : {}),
    },
    apiPorts,
    maxPerNamespace: d.maxAppClusterBindings ?? MAX_APP_CLUSTER_BINDINGS,
    peers: (namespace) => acbInformer.list(namespace),
    failures,
    readSecret: async (namespace, name) =>
      c.core.readNamespacedSecret({ namespace, name }).catch((e: unknown) => (ignoreNotFound(e), undefined)),
    exportable: (group, resource) => findExportable(cachedExportables(d.serving), group, resource),
    appAccess: (k, checks) => appAccess(reviewers.of(k), checks),
    provision: async (identity, who) => {
      const consumer = await provision(identity, who);
      return consumer.namespace;
    },
    findConsumer: async (identity) => findClusterNamespace(cachedNamespaces(d.serving), identity)?.metadata?.name,
    providerKubeconfig: async (ns) =>
      (await c.core.readNamespacedSecret({ namespace: ns, name: KUBECONFIG_SECRET }).catch((e: unknown) => (ignoreNotFound(e), undefined)))
        ?.data,
    namespace: async (name) => {
      const n = await c.core.readNamespace({ name }).catch((e: unknown) => (ignoreNotFound(e), undefined));
      return n && { uid: n.metadata?.uid, labels: n.metadata?.labels ?? {} };
    },
    ensureRoot: async (acb, ns, app, provider) => {
      // Created, never applied blind: a namespace that exists must be this AppClusterBinding's (a race with another
      // reconcile choosing the same name is lost here, and reported on the next look).
      const body = rootNamespaceObject(acb, ns);
      const made = await c.core.createNamespace({ body }).then(
        () => true,
        (e: unknown) => {
          if (!isConflict(e)) throw e;
          return false;
        },
      );
      if (!made) {
        const held = ownership((await c.core.readNamespace({ name: ns })).metadata?.labels, acb);
        if (held !== 'ours')
          throw new Error(
            `namespace ${ns} belongs to ${held.owner}, not to AppClusterBinding ${acb.metadata.namespace}/${acb.metadata.name}`,
          );
      }
      await c.core.patchNamespace({ name: ns, body, fieldManager: FIELD_MANAGER, force: true }, APPLY_PATCH);
      await c.networking.patchNamespacedNetworkPolicy(
        {
          name: ROOT_NETWORK_POLICY,
          namespace: ns,
          body: rootNetworkPolicy(acb, ns, apiPorts, d.monitoringNamespace),
          fieldManager: FIELD_MANAGER,
          force: true,
        },
        APPLY_PATCH,
      );
      await c.core.patchNamespacedServiceAccount(
        {
          name: BINDER,
          namespace: ns,
          body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: BINDER, namespace: ns, labels: acbLabels(acb) } },
          fieldManager: FIELD_MANAGER,
          force: true,
        },
        APPLY_PATCH,
      );
      await c.rbac.patchNamespacedRole(
        { name: BINDER, namespace: ns, body: konnectorRole(acb, ns), fieldManager: FIELD_MANAGER, force: true },
        APPLY_PATCH,
      );
      await c.rbac.patchNamespacedRoleBinding(
        { name: BINDER, namespace: ns, body: konnectorRoleBinding(acb, ns), fieldManager: FIELD_MANAGER, force: true },
        APPLY_PATCH,
      );
      await c.core.patchNamespacedSecret(
        {
          name: APP_KUBECONFIG_SECRET,
          namespace: ns,
          body: rootSecret(acb, ns, APP_KUBECONFIG_SECRET, app),
          fieldManager: FIELD_MANAGER,
          force: true,
        },
        APPLY_PATCH,
      );
      // The provider kubeconfig: created once; afterwards the konnector's heartbeat keeps it current (token rotation),
      // and a copy that is older than the cluster namespace's is refreshed.
      const have = await c.core
        .readNamespacedSecret({ name: PROVIDER_KUBECONFIG_SECRET, namespace: ns })
        .catch((e: unknown) => (ignoreNotFound(e), undefined));
      if (!have) {
        await c.core
          .createNamespacedSecret({ namespace: ns, body: rootSecret(acb, ns, PROVIDER_KUBECONFIG_SECRET, provider) })
          .catch((e: unknown) => {
            if (!isConflict(e)) throw e;
          });
      } else if (JSON.stringify(have.data) !== JSON.stringify(provider)) {
        await c.core.patchNamespacedSecret({ name: PROVIDER_KUBECONFIG_SECRET, namespace: ns, body: { data: provider } }, MERGE_PATCH);
      }
    },
    bindings: (ns) => bindings.list(ns) as APIServiceBinding[],
    applyBinding: async (b) => void (await apiBindings.apply(b, FIELD_MANAGER)),
    deleteBinding: (ns, name) => apiBindings.delete({ namespace: ns, name }),
    exportState: (ns, name): ExportState => {
      const e = d.leader.exports.get(name, ns);
      if (e) return { state: 'exported', claims: e.spec.permissionClaims ?? [] };
      const r = d.leader.exportRequests.get(name, ns);
      if (!r) return { state: 'none' };
      if (r.status?.phase === 'Failed') {
        const reason = r.status.conditions?.find((x) => x.status === 'False')?.reason;
        return { state: 'failed', message: r.status.terminalMessage ?? 'the export request failed', ...(reason ? { reason } : {}) };
      }
      return { state: 'requested' };
    },
    exportNames: (ns) => d.leader.exports.list(ns).map((e) => e.metadata.name!),
    requestExport: async (ns, group, resource) => {
      // One that exists already is the request made before: it stays as it is.
      await exportRequests.create({
        apiVersion: BIND_API_VERSION,
        kind: Kinds.APIServiceExportRequest,
        metadata: { name: `${resource}.${group}`, namespace: ns },
        spec: { resources: [{ group, resource }] },
      });
    },
    deleteExport: (ns, name) => exports.delete({ namespace: ns, name }),
    applyDeployment: async (dep) =>
      void (await c.apps.patchNamespacedDeployment(
        { name: dep.metadata!.name!, namespace: dep.metadata!.namespace!, body: dep, fieldManager: FIELD_MANAGER, force: true },
        APPLY_PATCH,
      )),
    deployment: async (namespace, name) => {
      const dep = await c.apps.readNamespacedDeployment({ namespace, name }).catch((e: unknown) => (ignoreNotFound(e), undefined));
      return dep && { uid: dep.metadata?.uid, labels: dep.metadata?.labels ?? {} };
    },
    deleteDeployment: (ns, name, uid) =>
      c.apps
        .deleteNamespacedDeployment({ namespace: ns, name, ...(uid ? { body: { preconditions: { uid } } } : {}) })
        .then(() => undefined, ignoreNotFound),
    deleteNamespace: (name, uid) =>
      c.core.deleteNamespace({ name, ...(uid ? { body: { preconditions: { uid } } } : {}) }).then(() => undefined, ignoreNotFound),
    setFinalizer: async (acb, present) => {
      const rest = (acb.metadata.finalizers ?? []).filter((f) => f !== ACB_FINALIZER);
      // The resourceVersion makes it conditional: a finalizer list changed meanwhile is not overwritten.
      await acbs.patch(
        { namespace: acb.metadata.namespace!, name: acb.metadata.name! },
        { metadata: { finalizers: present ? [...rest, ACB_FINALIZER] : rest, resourceVersion: acb.metadata.resourceVersion } },
      );
    },
    writeStatus: (acb, status) => acbs.patchStatus({ namespace: acb.metadata.namespace!, name: acb.metadata.name! }, status),
    ...(d.warn ? { warn: d.warn } : {}),
    refused: (r) => {
      const key = r.clusterId ?? '';
      const seen = refusals.get(key) ?? new Set<string>();
      refusals.set(key, seen);
      if (seen.has(`${r.api}\n${r.message}`)) return;
      seen.add(`${r.api}\n${r.message}`);
      recordRefusal(bindRefusals(d.registry), d.log, r);
    },
  };
}

/** App clusters asked at once: the most recently used keep their client and answers. */
const MAX_APP_CLUSTERS = 64;

/**
 * Per app-cluster kubeconfig (server, CA, credentials): one keep-alive client and its remembered answers
 * (lib/access-cache.ts), instead of a new client, TLS connections and 30-odd reviews on every reconcile. A changed
 * Secret is another key, so it is asked afresh.
 */
interface AppClusterReviewers {
  of(k: AppClusterKubeconfig): AccessCache;
}

function appClusterReviewers(): AppClusterReviewers {
  const byKey = new Map<string, AccessCache>();
  return {
    of: (k) => {
      const key = createHash('sha256')
        .update(JSON.stringify([k.server, k.ca, k.serverName, k.token, k.certData, k.keyData]))
        .digest('hex');
      let r = byKey.get(key);
      byKey.delete(key); // re-inserted last: the map's order is the order of use
      r ??= new AccessCache({ reviewer: keepAliveClient(appClusterKubeConfig(k), AuthorizationV1Api) });
      byKey.set(key, r);
      if (byKey.size > MAX_APP_CLUSTERS) byKey.delete(byKey.keys().next().value!);
      return r;
    },
  };
}

/** SelfSubjectAccessReviews in the app cluster, each within APP_CLUSTER_TIMEOUT_MS. */
async function appAccess(authz: AccessCache, checks: readonly AccessCheck[]): Promise<AppAccess> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${APP_CLUSTER_TIMEOUT_MS / 1000}s`)), APP_CLUSTER_TIMEOUT_MS);
  });
  try {
    return { missing: await Promise.race([missingAccess(authz, checks), timeout]) };
  } catch (e) {
    authz.forget(checks); // a question still unanswered is asked anew next time, not awaited again
    const code = statusOf(e);
    if (code === 401)
      return {
        unreachable: 'the app cluster refused the credentials (401 Unauthorized): put a current token or certificate into the Secret',
      };
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { unreachable: code ? `HTTP ${code}: ${messageOf(e)}` : `${(e as Error).message}${cause?.code ? ` (${cause.code})` : ''}` };
  } finally {
    clearTimeout(timer);
  }
}
