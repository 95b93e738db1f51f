/**
 * The provider side of one bound app cluster, created exactly the way a bind backend leaves it (Klutch's objects and
 * names, with a TokenRequest token instead of a legacy token Secret), so konnector suites can run before and without
 * a backend. The bind backend's end-to-end tests replace this helper with the real thing.
 *
 * What it creates on the provider cluster:
 * - the bind CRDs and the exported claim CRD (as Crossplane would have it);
 * - ClusterRole `klutch-binder` (the backend's bootstrap role);
 * - the consumer's cluster namespace (`generateName: cluster-`, annotation `example-backend.klutch.anynines.com/identity`);
 * - ClusterBinding `cluster`; ServiceAccount `klutch-binder`; RoleBinding `klutch-binder` → ClusterRole `klutch-binder`;
 * - ClusterRole `klutch-binder-<cluster ns>` (owned by the namespace): every verb on the exported resource and the
 *   claimed resources;
 * - a TokenRequest token for the ServiceAccount, bound to a holder Secret (deleting it revokes the token), and the
 *   kubeconfig Secret `kubeconfig` (written by the backend's writer, `providerKubeconfigYaml`: cluster/context/user
 *   `default`, namespace = cluster ns, CA inline);
 * - APIServiceExport `<plural>.<group>` from the CRD (served versions, informerScope Namespaced, the claims).
 * And it runs the backend's APIServiceNamespace controller: for each APIServiceNamespace a namespace
 * `<cluster ns>-<name>` (annotation `klutch.anynines.com/api-service-namespace`), RoleBinding `klutch-binder` there →
 * `klutch-binder-<cluster ns>`, then `status.namespace`; the namespace goes when the APIServiceNamespace does.
 *
 * Claimed resources (`claimedAccess`): `Namespace` (default) grants them namespace-wide in `klutch-binder-<cluster
 * ns>`, as Klutch's backend does; `Object` grants them only by name, as our backend does: Role and RoleBinding
 * `klutch-binder-claimed` in every provider namespace (the backend's own `claimedRules`), listing `<claim>-creds` of
 * the bound objects the test tells it about (`shareClaimed`).
 */
import { randomBytes } from 'node:crypto';
import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';
import {
  reconcileServiceNamespace,
  serviceNamespaceName,
  type ServiceNamespaceDeps,
} from '../../backend/controllers/service-namespace.reconcile';
import { claimedRules } from '../../backend/provision/claimed';
import { binderClusterRole, claimedRole, claimedRoleBinding } from '../../backend/provision/rbac';
import { Controller, watchInformer } from '../../controller';
import {
  Annotations,
  BIND_API_VERSION,
  BIND_GROUP,
  bindApiCrds,
  CLAIMED_ROLE,
  CLUSTER_BINDING_NAME,
  KUBECONFIG_SECRET_KEY,
  Kinds,
  providerKubeconfigYaml,
  type APIServiceNamespace,
  type PermissionClaim,
} from '../../exports/bind-api';
import type { ClusterInfo } from '../cluster/control-plane';
import { applyAt, installCrds, kubeFor, type Kube, requireOk } from '../cluster/kube';
import type { Crd } from '../../lib/xcrd';

export interface ProviderSideOptions {
  readonly provider: ClusterInfo;
  /** The claim CRD to export (installed on the provider if missing). */
  readonly crd: Crd;
  /** The export's permission claims (the template's). @default none */
  readonly permissionClaims?: readonly PermissionClaim[];
  /** `<sub>#<cluster id>` of the consumer. @default a random one */
  readonly identity?: string;
  /** Lifetime of the kubeconfig token. @default 3600 */
  readonly tokenSeconds?: number;
  /** How claimed resources are granted: namespace-wide (Klutch) or by name (our backend). @default Namespace */
  readonly claimedAccess?: 'Namespace' | 'Object';
}

export interface ProviderSide {
  /** The consumer's cluster namespace. */
  readonly clusterNamespace: string;
  /** `<plural>.<group>`: the name of the export, the binding and the CRD. */
  readonly exportName: string;
  /** The kubeconfig handed to the app cluster (what the backend's BindingResponse carries). */
  kubeconfig(): string;
  /** Issues a new token and writes it into the provider's `kubeconfig` Secret; returns a function that revokes the old one. */
  rotate(): Promise<() => Promise<void>>;
  /**
   * With `claimedAccess: Object`: shares the `<name>-creds` objects of the bound object `name` in a provider namespace
   * (as the backend does once it sees the bound object there), by adding them to Role `klutch-binder-claimed`.
   */
  shareClaimed(providerNamespace: string, name: string): Promise<void>;
  /**
   * Exports one more API to the same consumer (as a second `kubectl bind` would); returns its name. With `version`,
   * the export offers that version alone, as the backend's export of a template pinned to it does.
   */
  exportApi(crd: Crd, claims: readonly PermissionClaim[], version?: string, annotations?: Record<string, string>): Promise<string>;
  /** Admin client of the provider. */
  readonly kube: Kube;
  /** Stops the APIServiceNamespace controller and deletes what was created. */
  remove(): Promise<void>;
  /** Stops the APIServiceNamespace controller only. */
  stop(): Promise<void>;
}

const rbac = 'rbac.authorization.k8s.io';
const SA = 'klutch-binder';

/** Server-side apply as the provider side's field manager (the backend's objects it stands in for). */
const apply = (kube: Kube, path: string, name: string, body: unknown) => applyAt(kube, `${path}/${name}`, body, 'klutch-kit-test-backend');
const create = (kube: Kube, path: string, body: unknown) => requireOk(kube, 'POST', path, body);

export async function providerSide(o: ProviderSideOptions): Promise<ProviderSide> {
  const kube = kubeFor(o.provider);
  await installCrds(kube, bindApiCrds());
  const exportName = `${o.crd.spec.names.plural}.${o.crd.spec.group}`;
  const claims = o.permissionClaims ?? [];

  // The backend's own ClusterRole klutch-binder (backend/provision/rbac.ts), so the two never drift apart.
  await apply(kube, `/apis/${rbac}/v1/clusterroles`, SA, binderClusterRole() as unknown as Record<string, unknown>);

  const identity = o.identity ?? `user-${randomBytes(3).toString('hex')}#${randomBytes(3).toString('hex')}`;
  const nsObj = await create(kube, '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { generateName: 'cluster-', annotations: { [Annotations.identity]: identity } },
  });
  const ns = (nsObj.metadata as { name: string }).name;
  const nsUid = (nsObj.metadata as { uid: string }).uid;

  await create(kube, `/apis/${BIND_GROUP}/v1alpha1/namespaces/${ns}/clusterbindings`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.ClusterBinding,
    metadata: { name: CLUSTER_BINDING_NAME, namespace: ns },
    spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: KUBECONFIG_SECRET_KEY }, providerPrettyName: 'klutch-kit test provider' },
  });
  await create(kube, `/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: SA, namespace: ns },
  });
  await create(kube, `/apis/${rbac}/v1/namespaces/${ns}/rolebindings`, {
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata: { name: SA, namespace: ns },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: SA },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace: ns }],
  });
  const exportRole = `${SA}-${ns}`;
  const roleRules: unknown[] = [];
  const byName = o.claimedAccess === 'Object';
  const exported: { group: string; resource: string; kind: string; claims: readonly PermissionClaim[] }[] = [];
  /** Exports one more API to this consumer: the CRD, the export, and the rules of `klutch-binder-<cluster ns>`. */
  const exportApi = async (
    crd: Crd,
    claims: readonly PermissionClaim[],
    version?: string,
    annotations?: Record<string, string>,
  ): Promise<string> => {
    await installCrds(kube, [crd as unknown as Record<string, unknown>]);
    const { group, names } = crd.spec;
    exported.push({ group, resource: names.plural, kind: names.kind, claims });
    roleRules.push(
      { apiGroups: [group], resources: [names.plural, `${names.plural}/status`], verbs: ['*'] },
      ...(byName ? [] : claims.map((c) => ({ apiGroups: [c.group ?? ''], resources: [c.resource], verbs: ['*'] }))),
    );
    await apply(kube, `/apis/${rbac}/v1/clusterroles`, exportRole, {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: exportRole, ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: ns, uid: nsUid }] },
      rules: roleRules,
    });
    const name = `${names.plural}.${group}`;
    await create(kube, `/apis/${BIND_GROUP}/v1alpha1/namespaces/${ns}/apiserviceexports`, {
      apiVersion: BIND_API_VERSION,
      kind: Kinds.APIServiceExport,
      metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
      spec: {
        group,
        names: crd.spec.names,
        scope: crd.spec.scope,
        versions: crd.spec.versions
          .filter((v) => v.served && (version === undefined || v.name === version))
          .map((v) => (version === undefined ? v : { ...v, storage: true })),
        informerScope: 'Namespaced',
        ...(claims.length ? { permissionClaims: claims } : {}),
      },
    });
    return name;
  };

  let current = '';
  const issue = async (): Promise<{ kubeconfig: string; holder: string }> => {
    const holder = `${SA}-token-${randomBytes(3).toString('hex')}`;
    const h = await create(kube, `/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: holder, namespace: ns },
    });
    const tr = await create(kube, `/api/v1/namespaces/${ns}/serviceaccounts/${SA}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        expirationSeconds: o.tokenSeconds ?? 3600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: holder, uid: (h.metadata as { uid: string }).uid },
      },
    });
    const token = (tr.status as { token: string }).token;
    // Klutch's shape, by the backend's writer: one cluster, context and user `default`; the context names the cluster ns.
    const kubeconfig = providerKubeconfigYaml({ server: o.provider.server, ca: o.provider.ca }, ns, token);
    await apply(kube, `/api/v1/namespaces/${ns}/secrets`, 'kubeconfig', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kubeconfig', namespace: ns },
      data: { [KUBECONFIG_SECRET_KEY]: Buffer.from(kubeconfig).toString('base64') },
    });
    current = kubeconfig;
    return { kubeconfig, holder };
  };
  let holder = (await issue()).holder;

  await exportApi(o.crd, claims);

  /** Bound objects told about, per provider namespace; Role `klutch-binder-claimed` shares their `<name>-creds`. */
  const shared = new Map<string, Set<string>>();
  const applyClaimedRole = async (target: string): Promise<void> => {
    const bound = [...(shared.get(target) ?? [])];
    const rules = claimedRules({
      access: 'Object',
      grants: exported,
      objects: (group, resource) =>
        exported.some((e) => e.group === group && e.resource === resource)
          ? bound.map((name) => ({ metadata: { name } }))
          : bound.map((name) => ({ metadata: { name: `${name}-creds` } })),
    });
    await apply(kube, `/apis/${rbac}/v1/namespaces/${target}/roles`, CLAIMED_ROLE, claimedRole(target, ns, rules));
    await apply(kube, `/apis/${rbac}/v1/namespaces/${target}/rolebindings`, CLAIMED_ROLE, claimedRoleBinding(target, ns));
  };

  // The backend's own APIServiceNamespace reconcile (backend/controllers/service-namespace.reconcile.ts), on this
  // cluster's admin client; with claimedAccess Object, the claimed Role the test shares names in (shareClaimed) after it.
  const snPath = `/apis/${BIND_GROUP}/v1alpha1/namespaces/${ns}/apiservicenamespaces`;
  const sns = watchInformer<KubernetesObject>({ kc: kube.config, path: snPath });
  const namespaces = watchInformer<V1Namespace>({ kc: kube.config, path: '/api/v1/namespaces' });
  const okOr = (ok: (code: number) => boolean, what: string) => (r: { code: number; body: { message?: unknown } }) => {
    if (!ok(r.code)) throw new Error(`cannot ${what}: ${r.code} ${JSON.stringify(r.body.message)}`);
    return r;
  };
  const deps: ServiceNamespaceDeps = {
    ours: () => true,
    getServiceNamespace: (ref) => sns.get(ref.name, ref.namespace) as unknown as APIServiceNamespace | undefined,
    getNamespace: (name) => namespaces.get(name),
    namespacesFor: (key) => namespaces.list().filter((n) => n.metadata?.annotations?.[Annotations.apiServiceNamespace] === key),
    createNamespace: async (body) => {
      const r = await kube.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', ...body });
      if (r.code !== 409) return void okOr((c) => c < 300, `create namespace ${body.metadata!.name}`)(r);
      return (await requireOk(kube, 'GET', `/api/v1/namespaces/${body.metadata!.name}`)) as V1Namespace;
    },
    deleteNamespace: async (name) =>
      void okOr((c) => c < 300 || c === 404, `delete namespace ${name}`)(await kube.request('DELETE', `/api/v1/namespaces/${name}`)),
    createRoleBinding: async (body) =>
      void okOr(
        (c) => c < 300 || c === 409,
        `create RoleBinding ${body.metadata!.namespace}/${body.metadata!.name}`,
      )(await kube.request('POST', `/apis/${rbac}/v1/namespaces/${body.metadata!.namespace}/rolebindings`, body)),
    applyClaimQuota: async () => {},
    writeStatus: async (ref, namespace) =>
      void okOr(
        (c) => c < 300,
        `set status.namespace of APIServiceNamespace ${ref.namespace}/${ref.name}`,
      )(await kube.request('PATCH', `${snPath}/${ref.name}/status`, { status: { namespace } }, 'application/merge-patch+json')),
  };
  const ctl = new Controller({
    name: `test-backend-apiservicenamespaces/${ns}`,
    reconcile: async (name, ctx) => {
      const result = await reconcileServiceNamespace(deps, { namespace: ns, name }, ctx);
      const target = serviceNamespaceName(ns, name);
      if (byName && sns.get(name, ns) && namespaces.get(target)) await applyClaimedRole(target);
      return result;
    },
  });
  ctl.watch(sns, (sn) => [sn.metadata!.name!]);
  // The namespace made for an APIServiceNamespace brings its next reconcile (the RoleBinding, the claimed Role).
  ctl.watch(namespaces, (n) => {
    const owner = n.metadata?.annotations?.[Annotations.apiServiceNamespace];
    return owner?.startsWith(`${ns}/`) ? [owner.slice(ns.length + 1)] : [];
  });
  const ac = new AbortController();
  await Promise.all([sns.start(), namespaces.start()]);
  const running = ctl.run(ac.signal);
  const stop = async () => {
    ac.abort();
    await running;
    await Promise.all([sns.stop(), namespaces.stop()]);
  };

  return {
    clusterNamespace: ns,
    exportName,
    kube,
    exportApi,
    shareClaimed: async (target, name) => {
      if (!byName) throw new Error('shareClaimed needs claimedAccess: Object');
      shared.set(target, new Set([...(shared.get(target) ?? []), name]));
      await applyClaimedRole(target);
    },
    kubeconfig: () => current,
    rotate: async () => {
      const old = holder;
      holder = (await issue()).holder;
      return async () => void (await kube.request('DELETE', `/api/v1/namespaces/${ns}/secrets/${old}`));
    },
    stop,
    remove: async () => {
      await stop();
      const list = (await kube.request('GET', snPath)).body.items as APIServiceNamespace[] | undefined;
      for (const sn of list ?? []) await kube.request('DELETE', `/api/v1/namespaces/${ns}-${sn.metadata.name}`);
      await kube.request('DELETE', `/api/v1/namespaces/${ns}`);
    },
  };
}
