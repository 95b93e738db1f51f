import { describe, expect, it } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import type { APIServiceBinding, AppClusterBinding, AppClusterBindingStatus, Condition } from '../../exports/bind-api';
import type { Refusal } from '../authz/refusals';
import type { Exportable } from '../exportable';
import { ACB_FINALIZER, acbLabels } from './app-cluster-binding.objects';
import {
  reconcileAppClusterBinding,
  type AcbDeps,
  type AppAccess,
  type ExportState,
  type OwnedMeta,
} from './app-cluster-binding.reconcile';
import { hashedRootNamespace, rootCandidates } from './app-cluster-binding.root';
import { releaseDoc } from '../../lib/version';

const KUBECONFIG = [
  'apiVersion: v1',
  'clusters: [{name: app, cluster: {server: "https://app.example.com:6443"}}]',
  'users: [{name: u, user: {token: t0k}}]',
  'contexts: [{name: c, context: {cluster: app, user: u}}]',
  'current-context: c',
].join('\n');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const PG = 'postgresqlinstances.anynines.com';
const UID = '1234-abcd';

function acb(
  o: {
    apis?: string[];
    secretNamespace?: string;
    deleting?: boolean;
    conditions?: Condition[];
    finalizer?: boolean;
    name?: string;
    namespace?: string;
    uid?: string;
    rootNamespace?: string;
    created?: string;
    overrides?: NonNullable<AppClusterBinding['spec']['konnector']>['overrides'];
  } = {},
): AppClusterBinding {
  return {
    apiVersion: 'klutch.anynines.com/v1alpha1',
    kind: 'AppClusterBinding',
    metadata: {
      name: o.name ?? 'app1',
      namespace: o.namespace ?? 'team-a',
      uid: o.uid ?? UID,
      ...(o.created ? { creationTimestamp: o.created } : {}),
      ...(o.finalizer ? { finalizers: [ACB_FINALIZER] } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      kubeconfigSecretRef: { namespace: o.secretNamespace ?? o.namespace ?? 'team-a', name: 'app1-kubeconfig', key: 'kubeconfig' },
      apiExports: (o.apis ?? ['postgresqlinstances']).map((resource) => ({ group: 'anynines.com', resource })),
      konnector: { deploy: true, overrides: o.overrides ?? { image: 'registry.example.com/konnector:v9', args: ['--workers=4'] } },
    },
    ...(o.conditions || o.rootNamespace
      ? {
          status: { ...(o.conditions ? { conditions: o.conditions } : {}), ...(o.rootNamespace ? { rootNamespace: o.rootNamespace } : {}) },
        }
      : {}),
  };
}

/** team-a/app1 is ambiguous at the dash (team/a-app1 would make Klutch's name too): its root namespace is hashed. */
const ROOT = hashedRootNamespace(acb());

function exportable(resource: string, annotations: Record<string, string> = {}): Exportable {
  return {
    group: 'anynines.com',
    resource,
    kind: 'X',
    crd: {} as Exportable['crd'],
    template: {
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportTemplate',
      metadata: { name: resource, namespace: 'tpl', annotations },
      spec: { APIServiceSelector: { group: 'anynines.com', resource } },
    } as unknown as Exportable['template'],
  };
}

/** A world of plain functions; `log` records every write in order. */
function world(o: {
  secret?: boolean;
  /** The kubeconfig Secret's type. @default none (Opaque, as the API server defaults it) */
  secretType?: string;
  access?: AppAccess;
  templates?: Record<string, Exportable>;
  exports?: Record<string, ExportState>;
  bindings?: APIServiceBinding[];
  exportNames?: string[];
  /** Namespaces that exist, by name. */
  namespaces?: Record<string, OwnedMeta>;
  deployment?: OwnedMeta;
  apiPorts?: number[];
  /** The AppClusterBindings of the namespace, as cached. @default none */
  peers?: AppClusterBinding[];
  maxPerNamespace?: number;
}) {
  const log: string[] = [];
  /** The Secrets read, in order. */
  const reads: string[] = [];
  const namespaces = new Map(Object.entries(o.namespaces ?? {}));
  let writtenStatus: AppClusterBindingStatus | undefined;
  const refusals: Refusal[] = [];
  const warnings: string[] = [];
  let status: AppClusterBindingStatus | undefined;
  let deployment: V1Deployment | undefined;
  const applied: APIServiceBinding[] = [];
  const d: AcbDeps = {
    defaultBindPolicy: 'allow-all',
    konnector: { image: 'ghcr.io/klutch-kit/konnector:v0.1.0', allowed: ['registry.example.com/konnector:*'] },
    apiPorts: o.apiPorts ?? [443, 6443],
    maxPerNamespace: o.maxPerNamespace ?? 20,
    peers: (ns) => (o.peers ?? []).filter((p) => p.metadata.namespace === ns),
    failures: new Map(),
    readSecret: async (ns, name) => {
      reads.push(`${ns}/${name}`);
      return o.secret === false
        ? undefined
        : { metadata: { name, namespace: ns }, ...(o.secretType ? { type: o.secretType } : {}), data: { kubeconfig: b64(KUBECONFIG) } };
    },
    exportable: async (_g, r) => (o.templates ?? { postgresqlinstances: exportable('postgresqlinstances') })[r],
    appAccess: async () => o.access ?? { missing: [] },
    provision: async (identity, who) => (log.push(`provision ${identity} as ${who.subject} ${who.groups.join(',')}`), 'cluster-x'),
    findConsumer: async () => 'cluster-x',
    providerKubeconfig: async () => ({ kubeconfig: b64('provider') }),
    namespace: async (name) => namespaces.get(name),
    ensureRoot: async (a, root) => {
      namespaces.set(root, { uid: `ns-${root}`, labels: acbLabels(a) });
      log.push(`root ${a.metadata.name} ${root}`);
    },
    bindings: (ns) => (o.bindings ?? []).filter((b) => b.metadata.namespace === ns),
    applyBinding: async (b) => (applied.push(b), void log.push(`apply binding ${b.metadata.name}`)),
    deleteBinding: async (ns, name) => void log.push(`delete binding ${ns}/${name}`),
    exportState: (_ns, name) => (o.exports ?? {})[name] ?? { state: 'none' },
    exportNames: () => o.exportNames ?? [],
    requestExport: async (ns, g, r) => void log.push(`request ${ns} ${r}.${g}`),
    deleteExport: async (ns, name) => void log.push(`delete export ${ns}/${name}`),
    applyDeployment: async (dep) => ((deployment = dep), void log.push(`apply deployment ${dep.metadata!.name}`)),
    deployment: async () => o.deployment,
    deleteDeployment: async (ns, name, uid) => void log.push(`delete deployment ${ns}/${name}${uid ? ` uid ${uid}` : ''}`),
    deleteNamespace: async (name, uid) => void log.push(`delete namespace ${name}${uid ? ` uid ${uid}` : ''}`),
    setFinalizer: async (_a, present) => void log.push(`finalizer ${present}`),
    writeStatus: async (_a, s) => void (status = writtenStatus = s),
    refused: (r) => void refusals.push(r),
    warn: (obj, reason, message) => void warnings.push(`${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name} ${reason}: ${message}`),
  };
  return {
    d,
    warnings,
    log,
    reads,
    refusals,
    applied,
    deployment: () => deployment,
    status: () => writtenStatus,
    cond: (type: string) => status?.conditions?.find((c) => c.type === type),
  };
}

/** A Ready binding in `root`, labelled as `owner`'s (team-a/app1's by default). */
const readyBinding = (name: string, root = ROOT, owner: AppClusterBinding = acb()): APIServiceBinding => ({
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'APIServiceBinding',
  metadata: { name, namespace: root, labels: acbLabels(owner) },
  spec: { kubeconfigSecretRef: { name: 'kubeconfig', namespace: root, key: 'kubeconfig' } },
  status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
});

describe('reconcileAppClusterBinding', () => {
  it("binds: consumer, root namespace, export, binding and Klutch's konnector Deployment; every condition True", async () => {
    const w = world({
      exports: { [PG]: { state: 'exported', claims: [{ group: '', resource: 'secrets', version: 'v1' }] } },
      bindings: [readyBinding(PG)],
    });
    const r = await reconcileAppClusterBinding(w.d, acb());
    expect(w.log).toEqual([
      'finalizer true',
      'provision system:appclusterbinding:team-a:app1#1234abcd as system:appclusterbinding:team-a:app1 system:appclusterbindings:team-a',
      `root app1 ${ROOT}`,
      'apply binding postgresqlinstances.anynines.com',
      'apply deployment konnector-app1',
    ]);
    expect(w.applied[0]!.spec).toEqual({
      kubeconfigSecretRef: { name: 'kubeconfig', namespace: ROOT, key: 'kubeconfig' },
      permissionClaims: [{ group: '', resource: 'secrets', version: 'v1', state: 'Accepted' }],
    });
    expect(w.applied[0]!.metadata.labels).toMatchObject({
      'klutch.anynines.com/appclusterbinding-name': 'app1',
      'klutch.anynines.com/appclusterbinding-namespace': 'team-a',
    });
    const dep = w.deployment()!;
    expect(dep.metadata).toMatchObject({ name: 'konnector-app1', namespace: ROOT });
    const c = dep.spec!.template.spec!.containers[0]!;
    expect(dep.spec!.template.spec!.serviceAccountName).toBe('klutch-binder');
    expect(c.image).toBe('registry.example.com/konnector:v9');
    expect(c.args).toEqual([
      '--control-plane-mode',
      '--app-cluster-kubeconfig-secret-name=app-cluster-kubeconfig',
      `--app-cluster-kubeconfig-secret-namespace=${ROOT}`,
      '--app-cluster-kubeconfig-secret-key=kubeconfig',
      `--binding-root-namespace=${ROOT}`,
      '--lease-namespace=$(POD_NAMESPACE)',
      '--probe-address=:8080',
      '--workers=4',
    ]);
    expect(c.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    for (const t of ['SecretValid', 'AppClusterAccess', 'RootNamespace', PG, 'KonnectorDeployed', 'Ready'])
      expect(w.cond(t)?.status, t).toBe('True');
    expect(w.status()?.rootNamespace).toBe(ROOT);
    expect(r).toEqual({ requeueAfterMs: 60_000 });
  });

  it('without spec.konnector.deploy, deploys no konnector and names the flags to run one with, and where', async () => {
    const w = world({ exports: { [PG]: { state: 'exported', claims: [] } }, bindings: [readyBinding(PG)] });
    const manual = acb();
    manual.spec.konnector = { deploy: false };
    await reconcileAppClusterBinding(w.d, manual);
    expect(w.log.filter((l) => l.startsWith('apply deployment'))).toEqual([]);
    expect(w.cond('KonnectorDeployed')).toMatchObject({ status: 'False', reason: 'NotRequested', severity: 'Info' });
    expect(w.cond('KonnectorDeployed')?.message).toBe(
      `spec.konnector.deploy is not true, so no konnector runs for this app cluster: set spec.konnector.deploy to true, or run one yourself in namespace ${ROOT} as ServiceAccount klutch-binder with the flags --control-plane-mode --app-cluster-kubeconfig-secret-name=app-cluster-kubeconfig --app-cluster-kubeconfig-secret-namespace=${ROOT} --app-cluster-kubeconfig-secret-key=kubeconfig --binding-root-namespace=${ROOT} --lease-namespace=$(POD_NAMESPACE) --probe-address=:8080 (${releaseDoc('docs/app-cluster-binding.md')})`,
    );
  });

  it('binds at most --max-app-cluster-bindings of a namespace, the oldest first, and never unbinds one that is bound', async () => {
    const team = ['a', 'b', 'c'].map((n, i) => acb({ name: `app-${n}`, uid: `uid-${n}`, created: `2026-01-0${i + 1}T00:00:00Z` }));
    const [a, b, c] = team as [AppClusterBinding, AppClusterBinding, AppClusterBinding];
    const other = acb({ name: 'app-z', namespace: 'team-b', uid: 'uid-z', created: '2025-01-01T00:00:00Z' });
    // The third of team-a waits, and nothing is made for it.
    const w = world({ peers: [...team, other], maxPerNamespace: 2 });
    await reconcileAppClusterBinding(w.d, c);
    expect(w.cond('WithinLimit')).toMatchObject({ status: 'False', reason: 'TooManyAppClusterBindings' });
    expect(w.cond('WithinLimit')?.message).toBe(
      "namespace team-a has 2 older AppClusterBindings and the platform operator allows 2 (the backend's --max-app-cluster-bindings): each runs a konnector on the control plane. Delete one you no longer need, or ask the operator for more; this one is bound once it is within the limit",
    );
    expect(w.cond('Ready')).toMatchObject({ status: 'False', reason: 'TooManyAppClusterBindings' });
    expect(w.log.filter((l) => !l.startsWith('finalizer'))).toEqual([]);
    expect(w.reads).toEqual([]);
    // The second is within it; another namespace's count is its own.
    const second = world({ peers: [...team, other], maxPerNamespace: 2 });
    await reconcileAppClusterBinding(second.d, b);
    expect(second.cond('WithinLimit')).toBeUndefined();
    expect(second.reads).toEqual(['team-a/app1-kubeconfig']);
    // An older one being deleted leaves room.
    const room = world({
      peers: [{ ...a, metadata: { ...a.metadata, deletionTimestamp: '2026-02-01T00:00:00Z' } }, b, c],
      maxPerNamespace: 2,
    });
    await reconcileAppClusterBinding(room.d, c);
    expect(room.cond('WithinLimit')).toBeUndefined();
    // One bound already stays bound when the limit is lowered below it: unbinding would delete its claims.
    const lowered = world({ peers: team, maxPerNamespace: 1 });
    await reconcileAppClusterBinding(lowered.d, { ...c, status: { rootNamespace: 'klutch-bind-team-a-app-c' } });
    expect(lowered.cond('WithinLimit')).toBeUndefined();
    expect(lowered.reads).toEqual(['team-a/app1-kubeconfig']);
    // So does one whose root namespace an earlier release (or Klutch) made and labelled as its own, with no status.
    const ownedRoot = rootCandidates(c).hashed;
    const adopted = world({ peers: team, maxPerNamespace: 1, namespaces: { [ownedRoot]: { uid: 'ns-c', labels: acbLabels(c) } } });
    await reconcileAppClusterBinding(adopted.d, c);
    expect(adopted.cond('WithinLimit')).toBeUndefined();
  });

  it('refuses a kubeconfig Secret outside its own namespace, and does nothing else', async () => {
    const w = world({});
    await reconcileAppClusterBinding(w.d, acb({ secretNamespace: 'kube-system' }));
    expect(w.cond('SecretValid')).toMatchObject({ status: 'False', reason: 'SecretNamespaceForbidden' });
    expect(w.cond('SecretValid')!.message).toContain('move the Secret into team-a');
    expect(w.cond('Ready')?.status).toBe('False');
    expect(w.log).toEqual([]);
  });

  it('warns on the AppClusterBinding as a condition turns False, once: not again while it stays so, again for another reason', async () => {
    const w = world({});
    const bad = acb({ secretNamespace: 'kube-system' });
    await reconcileAppClusterBinding(w.d, bad);
    expect(w.warnings).toEqual([`AppClusterBinding team-a/app1 SecretNamespaceForbidden: SecretValid: ${w.cond('SecretValid')!.message}`]);
    // The next reconcile sees its own status: nothing new to say.
    await reconcileAppClusterBinding(w.d, { ...bad, status: w.status() });
    expect(w.warnings).toHaveLength(1);
    const other = world({ secretType: 'kubernetes.io/service-account-token' });
    await reconcileAppClusterBinding(other.d, { ...acb(), status: w.status() });
    expect(other.warnings).toEqual([expect.stringMatching(/^AppClusterBinding team-a\/app1 SecretTypeNotOpaque: SecretValid: /)]);
    // All well: no warning.
    const fine = world({});
    await reconcileAppClusterBinding(fine.d, acb());
    expect(fine.warnings).toEqual([]);
  });

  it.each([
    ['kubernetes.io/service-account-token', 'a token Secret the token controller fills in'],
    ['cluster.x-k8s.io/secret', "Cluster API's kubeconfig of a cluster it made"],
    ['connection.crossplane.io/v1alpha1', 'a Crossplane connection Secret'],
  ])('reads only the Secret it names, and refuses it unless Opaque: %s (%s; issue 34, item 10)', async (type) => {
    const w = world({ secretType: type });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond('SecretValid')).toMatchObject({ status: 'False', reason: 'SecretTypeNotOpaque' });
    expect(w.cond('SecretValid')!.message).toBe(
      `Secret team-a/app1-kubeconfig (spec.kubeconfigSecretRef.name "app1-kubeconfig") is of type ${type}; the backend reads app cluster kubeconfigs only from Secrets of type Opaque: put the kubeconfig into a Secret of its own (kubectl create secret generic <name> -n team-a --from-file=kubeconfig=<file>) and name that one in spec.kubeconfigSecretRef.name`,
    );
    // Only the one it names is read, and nothing is written: no root namespace, no copy of its data, no konnector.
    expect(w.reads).toEqual(['team-a/app1-kubeconfig']);
    expect(w.log).toEqual([]);
  });

  it('takes an Opaque Secret, by the name it gives', async () => {
    const w = world({ secretType: 'Opaque' });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond('SecretValid')).toMatchObject({ status: 'True' });
    expect(w.reads).toEqual(['team-a/app1-kubeconfig']);
  });

  it('refuses a kubeconfig that may not do what the konnector needs, naming the missing permissions', async () => {
    const w = world({ access: { missing: ['create customresourcedefinitions.apiextensions.k8s.io'] } });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond('AppClusterAccess')).toMatchObject({ status: 'False', reason: 'Forbidden' });
    expect(w.cond('AppClusterAccess')!.message).toContain('may not create customresourcedefinitions.apiextensions.k8s.io');
    expect(w.cond('AppClusterAccess')!.message).toContain(
      `ClusterRole klutch-control-plane-konnector (${releaseDoc('docs/app-cluster-binding.md')})`,
    );
    expect(w.log).toEqual([]);
  });

  it('takes a cluster-admin kubeconfig, but says so on AppClusterAccess (issue 34, item 10); a minimal one is Allowed', async () => {
    const admin = world({ access: { missing: [] } });
    await reconcileAppClusterBinding(admin.d, acb());
    expect(admin.cond('AppClusterAccess')).toMatchObject({ status: 'True', reason: 'ClusterAdmin' });
    expect(admin.cond('AppClusterAccess')!.message).toContain('may do everything in the app cluster; it is stored on the control plane');
    expect(admin.cond('AppClusterAccess')!.message).toContain(
      `ClusterRole klutch-control-plane-konnector (${releaseDoc('docs/app-cluster-binding.md')})`,
    );
    const minimal = world({ access: { missing: ['* *.*'] } });
    await reconcileAppClusterBinding(minimal.d, acb());
    expect(minimal.cond('AppClusterAccess')).toMatchObject({ status: 'True', reason: 'Allowed' });
  });

  it("refuses only the API whose permissions the app cluster's kubeconfig lacks", async () => {
    const w = world({ access: { missing: ['delete postgresqlinstances.anynines.com'] } });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond(PG)).toMatchObject({ status: 'False', reason: 'AppClusterForbidden' });
    expect(w.log).not.toContain(`request cluster-x ${PG}`);
    expect(w.cond('Ready')?.status).toBe('False');
  });

  it('refuses an API with claims while the kubeconfig is not under the copies-only policy (issue 34, item 7)', async () => {
    const claiming = exportable('postgresqlinstances');
    (claiming.template.spec as { permissionClaims?: unknown }).permissionClaims = [{ group: '', resource: 'secrets', version: 'v1' }];
    const held = 'held-by copies-only-policies.klutch-kit.anynines.com (klutch-control-plane-konnector)';
    const w = world({ templates: { postgresqlinstances: claiming }, access: { missing: [held] } });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond(PG)).toMatchObject({ status: 'False', reason: 'AppClusterForbidden' });
    expect(w.cond(PG)!.message).toContain(`may not ${held}`);
    expect(w.log).not.toContain(`request cluster-x ${PG}`);
  });

  it('reports an unreachable app cluster and backs off: 5s, 10s, 20s, and starts over once it answers', async () => {
    const w = world({ access: { unreachable: 'connect ECONNREFUSED 10.0.0.1:6443' } });
    const waits = [];
    for (let i = 0; i < 3; i++) waits.push((await reconcileAppClusterBinding(w.d, acb()))!.requeueAfterMs);
    expect(waits).toEqual([5_000, 10_000, 20_000]);
    expect(w.cond('AppClusterAccess')!.message).toContain('retrying with backoff');
    expect(w.cond('AppClusterAccess')).toMatchObject({ status: 'False', reason: 'Unreachable' });
    expect(w.cond('AppClusterAccess')!.message).toContain('ECONNREFUSED');
    expect(w.log).toEqual([]);
    (w.d as { appAccess: AcbDeps['appAccess'] }).appAccess = async () => ({ missing: [] });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.d.failures.size).toBe(0);
  });

  it('refuses an API its template does not allow to the AppClusterBinding: condition, one refusal record, no export', async () => {
    const templates = { postgresqlinstances: exportable('postgresqlinstances', { 'klutch-kit.anynines.com/bind-allowed-groups': 'dba' }) };
    const w = world({ templates });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond(PG)).toMatchObject({ status: 'False', reason: 'Forbidden' });
    expect(w.cond(PG)!.message).toContain('only a member of group "dba" may bind postgresqlinstances.anynines.com');
    expect(w.refusals).toHaveLength(1);
    expect(w.refusals[0]).toMatchObject({ path: 'appclusterbinding', api: PG, reason: 'not-allowed', clusterId: 'team-a/app1' });
    expect(w.log.some((l) => l.startsWith('request'))).toBe(false);
    // Looking again at the same refusal does not count it again.
    const again = world({ templates });
    await reconcileAppClusterBinding(again.d, acb({ conditions: [{ ...w.cond(PG)! }] }));
    expect(again.refusals).toHaveLength(0);
    // The namespace's group is what a rule names to allow it.
    const allowed = world({
      templates: {
        postgresqlinstances: exportable('postgresqlinstances', {
          'klutch-kit.anynines.com/bind-allowed-groups': 'system:appclusterbindings:team-a',
        }),
      },
    });
    await reconcileAppClusterBinding(allowed.d, acb());
    expect(allowed.log).toContain(`request cluster-x ${PG}`);
  });

  it('unbinds an API dropped from apiExports: its binding first, its export only once the binding is gone', async () => {
    const SB = 'servicebindings.anynines.com';
    const w = world({
      bindings: [readyBinding(PG), readyBinding(SB)],
      exports: { [PG]: { state: 'exported', claims: [] } },
      exportNames: [PG, SB],
    });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.log).toContain(`delete binding ${ROOT}/${SB}`);
    expect(w.log).not.toContain(`delete export cluster-x/${SB}`);
    const later = world({ bindings: [readyBinding(PG)], exports: { [PG]: { state: 'exported', claims: [] } }, exportNames: [PG, SB] });
    await reconcileAppClusterBinding(later.d, acb());
    expect(later.log).toContain(`delete export cluster-x/${SB}`);
    expect(later.log).not.toContain(`delete export cluster-x/${PG}`);
  });

  it('deletes in the order that strands nothing: bindings (and waits for the konnector), then konnector, consumer, root namespace, finalizer', async () => {
    const w = world({ bindings: [readyBinding(PG)], namespaces: { [ROOT]: { uid: 'ns-uid', labels: acbLabels(acb()) } } });
    expect(await reconcileAppClusterBinding(w.d, acb({ deleting: true, finalizer: true }))).toEqual({ requeueAfterMs: 2_000 });
    expect(w.log).toEqual([`delete binding ${ROOT}/${PG}`]);
    expect(w.cond('Ready')).toMatchObject({ status: 'False', reason: 'Deleting' });
    const gone = world({
      bindings: [],
      namespaces: { [ROOT]: { uid: 'ns-uid', labels: acbLabels(acb()) } },
      deployment: { uid: 'dep-uid', labels: acbLabels(acb()) },
    });
    expect(await reconcileAppClusterBinding(gone.d, acb({ deleting: true, finalizer: true, rootNamespace: ROOT }))).toBeUndefined();
    expect(gone.log).toEqual([
      `delete deployment ${ROOT}/konnector-app1 uid dep-uid`,
      'delete namespace cluster-x',
      `delete namespace ${ROOT} uid ns-uid`,
      'finalizer false',
    ]);
  });

  it("binds two AppClusterBindings whose Klutch names collide (team/a-prod, team-a/prod) into two namespaces; neither's deletion touches the other's", async () => {
    const victim = acb({ namespace: 'team-a', name: 'prod', uid: 'victim-uid' });
    const attacker = acb({ namespace: 'team', name: 'a-prod', uid: 'attacker-uid' });
    const exports = { [PG]: { state: 'exported', claims: [] } as ExportState };
    const v = world({ exports });
    await reconcileAppClusterBinding(v.d, victim);
    const a = world({ exports });
    await reconcileAppClusterBinding(a.d, attacker);
    const vRoot = v.status()!.rootNamespace!;
    const aRoot = a.status()!.rootNamespace!;
    expect(vRoot).not.toBe(aRoot);
    expect([vRoot, aRoot]).not.toContain('klutch-bind-team-a-prod');
    // The attacker's deletion, in a world where both namespaces and bindings exist: only its own go.
    const both = world({
      bindings: [readyBinding(PG, vRoot, victim), readyBinding(PG, aRoot, attacker)],
      namespaces: { [vRoot]: { uid: 'v', labels: acbLabels(victim) }, [aRoot]: { uid: 'a', labels: acbLabels(attacker) } },
    });
    await reconcileAppClusterBinding(both.d, {
      ...attacker,
      metadata: { ...attacker.metadata, finalizers: [ACB_FINALIZER], deletionTimestamp: 'x' },
    });
    expect(both.log).toEqual([`delete binding ${aRoot}/${PG}`]);
  });

  it('refuses a root namespace another AppClusterBinding holds: a condition naming the owner and the fix, nothing written', async () => {
    const other = acb({ namespace: 'team-b', name: 'x', uid: 'other-uid' });
    const w = world({ namespaces: { [ROOT]: { uid: 'ns', labels: acbLabels(other) } } });
    // As a hash collision would make it: the recorded root namespace is held by team-b/x.
    await reconcileAppClusterBinding(w.d, acb({ rootNamespace: ROOT }));
    expect(w.cond('RootNamespace')).toMatchObject({ status: 'False', reason: 'Taken' });
    expect(w.cond('RootNamespace')!.message).toBe(
      `the binding root namespace ${ROOT} belongs to AppClusterBinding team-b/x (uid other-uid), not to AppClusterBinding team-a/app1: nothing is written there; create this AppClusterBinding under another name (the root namespace is derived from its namespace and name), or delete the other one first`,
    );
    expect(w.cond('Ready')?.status).toBe('False');
    expect(w.log).toEqual([]);
    // A namespace nobody's AppClusterBinding made: the same, with its own fix.
    const stray = world({ namespaces: { [ROOT]: { uid: 'ns', labels: {} } } });
    await reconcileAppClusterBinding(stray.d, acb());
    expect(stray.cond('RootNamespace')!.message).toContain(`delete namespace ${ROOT} if it is unused`);
    expect(stray.log).toEqual([]);
  });

  it('keeps the recorded root namespace, ignores a recorded one that is not among its names, and prefers a free unambiguous Klutch name', async () => {
    const team = (rootNamespace?: string) => acb({ namespace: 'team', name: 'app', ...(rootNamespace ? { rootNamespace } : {}) });
    const fresh = world({});
    await reconcileAppClusterBinding(fresh.d, team());
    expect(fresh.status()?.rootNamespace).toBe('klutch-bind-team-app');
    // Klutch's name was taken once, so the hashed one was recorded: it stays, though Klutch's is free now.
    const hashed = hashedRootNamespace(team());
    const kept = world({});
    await reconcileAppClusterBinding(kept.d, team(hashed));
    expect(kept.log).toContain(`root app ${hashed}`);
    // A status naming another team's namespace chooses nothing.
    const forged = world({});
    await reconcileAppClusterBinding(forged.d, team('klutch-bind-other-victim'));
    expect(forged.log).toContain('root app klutch-bind-team-app');
    // Klutch's name held by a namespace not made for it: the hashed one.
    const held = world({ namespaces: { 'klutch-bind-team-app': { uid: 'x', labels: {} } } });
    await reconcileAppClusterBinding(held.d, team());
    expect(held.status()?.rootNamespace).toBe(hashed);
  });

  it("adopts the root namespace an earlier version made for it under Klutch's ambiguous name, and labels its bindings with the uid", async () => {
    const legacy = 'klutch-bind-team-a-app1';
    const old = { [`klutch.anynines.com/appclusterbinding-name`]: 'app1', [`klutch.anynines.com/appclusterbinding-namespace`]: 'team-a' };
    const binding = { ...readyBinding(PG, legacy), metadata: { name: PG, namespace: legacy, labels: old } };
    const w = world({
      namespaces: { [legacy]: { uid: 'ns', labels: old } },
      bindings: [binding],
      exports: { [PG]: { state: 'exported', claims: [] } },
    });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.status()?.rootNamespace).toBe(legacy);
    expect(w.applied[0]!.metadata.labels).toMatchObject({ 'klutch-kit.anynines.com/appclusterbinding-uid': UID });
    // Another AppClusterBinding's legacy namespace is never adopted: team/a-app1 gets its hashed one.
    const other = acb({ namespace: 'team', name: 'a-app1', uid: 'other' });
    const o = world({ namespaces: { [legacy]: { uid: 'ns', labels: old } } });
    await reconcileAppClusterBinding(o.d, other);
    expect(o.status()?.rootNamespace).toBe(hashedRootNamespace(other));
  });

  it('refuses overrides beyond what the operator allows: a condition naming each field, no Deployment, and its old one deleted', async () => {
    const w = world({ deployment: { uid: 'dep', labels: acbLabels(acb()) } });
    await reconcileAppClusterBinding(w.d, acb({ overrides: { image: 'evil.example.com/x:1', command: ['/bin/sh'] } }));
    expect(w.cond('KonnectorDeployed')).toMatchObject({ status: 'False', reason: 'OverridesRefused' });
    expect(w.cond('KonnectorDeployed')!.message).toContain('spec.konnector.overrides.command may not be set');
    expect(w.cond('KonnectorDeployed')!.message).toContain(
      'spec.konnector.overrides.image "evil.example.com/x:1" is not an image the platform operator allows',
    );
    expect(w.log.filter((l) => l.includes('deployment'))).toEqual([`delete deployment ${ROOT}/konnector-app1 uid dep`]);
    // Not another's Deployment, though.
    const theirs = world({ deployment: { uid: 'dep', labels: acbLabels(acb({ uid: 'someone-else' })) } });
    await reconcileAppClusterBinding(theirs.d, acb({ overrides: { command: ['/bin/sh'] } }));
    expect(theirs.log.filter((l) => l.includes('deployment'))).toEqual([]);
  });

  it("refuses an app cluster whose API server port the root namespace's NetworkPolicy does not open, naming the flag", async () => {
    const w = world({ apiPorts: [443] });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond('AppClusterAccess')).toMatchObject({ status: 'False', reason: 'PortNotAllowed' });
    expect(w.cond('AppClusterAccess')!.message).toContain("add 6443 to the backend's --konnector-api-ports");
    expect(w.log).toEqual([]);
  });
});
