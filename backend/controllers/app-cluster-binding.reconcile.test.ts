import { describe, expect, it } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import type { APIServiceBinding, AppClusterBinding, AppClusterBindingStatus, Condition } from '../../exports/bind-api';
import type { Refusal } from '../authz/refusals';
import type { Exportable } from '../exportable';
import { ACB_FINALIZER } from './app-cluster-binding.objects';
import { reconcileAppClusterBinding, type AcbDeps, type AppAccess, type ExportState } from './app-cluster-binding.reconcile';

const KUBECONFIG = [
  'apiVersion: v1',
  'clusters: [{name: app, cluster: {server: "https://app.example.com:6443"}}]',
  'users: [{name: u, user: {token: t0k}}]',
  'contexts: [{name: c, context: {cluster: app, user: u}}]',
  'current-context: c',
].join('\n');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const ROOT = 'klutch-bind-team-a-app1';
const PG = 'postgresqlinstances.anynines.com';

function acb(
  o: { apis?: string[]; secretNamespace?: string; deleting?: boolean; conditions?: Condition[]; finalizer?: boolean } = {},
): AppClusterBinding {
  return {
    apiVersion: 'klutch.anynines.com/v1alpha1',
    kind: 'AppClusterBinding',
    metadata: {
      name: 'app1',
      namespace: 'team-a',
      uid: '1234-abcd',
      ...(o.finalizer ? { finalizers: [ACB_FINALIZER] } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      kubeconfigSecretRef: { namespace: o.secretNamespace ?? 'team-a', name: 'app1-kubeconfig', key: 'kubeconfig' },
      apiExports: (o.apis ?? ['postgresqlinstances']).map((resource) => ({ group: 'anynines.com', resource })),
      konnector: { deploy: true, overrides: { image: 'registry.example.com/konnector:v9', args: ['--workers=4'] } },
    },
    ...(o.conditions ? { status: { conditions: o.conditions } } : {}),
  };
}

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
  access?: AppAccess;
  templates?: Record<string, Exportable>;
  exports?: Record<string, ExportState>;
  bindings?: APIServiceBinding[];
  exportNames?: string[];
}) {
  const log: string[] = [];
  const refusals: Refusal[] = [];
  let status: AppClusterBindingStatus | undefined;
  let deployment: V1Deployment | undefined;
  const applied: APIServiceBinding[] = [];
  const d: AcbDeps = {
    defaultBindPolicy: 'allow-all',
    konnectorImage: 'ghcr.io/klutch-kit/konnector:v0.1.0',
    failures: new Map(),
    readSecret: async (ns, name) =>
      o.secret === false ? undefined : { metadata: { name, namespace: ns }, data: { kubeconfig: b64(KUBECONFIG) } },
    exportable: async (_g, r) => (o.templates ?? { postgresqlinstances: exportable('postgresqlinstances') })[r],
    appAccess: async () => o.access ?? { missing: [] },
    provision: async (identity, who) => (log.push(`provision ${identity} as ${who.subject} ${who.groups.join(',')}`), 'cluster-x'),
    findConsumer: async () => 'cluster-x',
    providerKubeconfig: async () => ({ kubeconfig: b64('provider') }),
    ensureRoot: async (a) => void log.push(`root ${a.metadata.name}`),
    bindings: () => o.bindings ?? [],
    applyBinding: async (b) => (applied.push(b), void log.push(`apply binding ${b.metadata.name}`)),
    deleteBinding: async (ns, name) => void log.push(`delete binding ${ns}/${name}`),
    exportState: (_ns, name) => (o.exports ?? {})[name] ?? { state: 'none' },
    exportNames: () => o.exportNames ?? [],
    requestExport: async (ns, g, r) => void log.push(`request ${ns} ${r}.${g}`),
    deleteExport: async (ns, name) => void log.push(`delete export ${ns}/${name}`),
    applyDeployment: async (dep) => ((deployment = dep), void log.push(`apply deployment ${dep.metadata!.name}`)),
    deleteDeployment: async (ns, name) => void log.push(`delete deployment ${ns}/${name}`),
    deleteNamespace: async (name) => void log.push(`delete namespace ${name}`),
    setFinalizer: async (_a, present) => void log.push(`finalizer ${present}`),
    writeStatus: async (_a, s) => void (status = s),
    refused: (r) => void refusals.push(r),
  };
  return {
    d,
    log,
    refusals,
    applied,
    deployment: () => deployment,
    cond: (type: string) => status?.conditions?.find((c) => c.type === type),
  };
}

const readyBinding = (name: string): APIServiceBinding => ({
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'APIServiceBinding',
  metadata: { name, namespace: ROOT },
  spec: { kubeconfigSecretRef: { name: 'kubeconfig', namespace: ROOT, key: 'kubeconfig' } },
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
      'root app1',
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
    for (const t of ['SecretValid', 'AppClusterAccess', PG, 'KonnectorDeployed', 'Ready']) expect(w.cond(t)?.status, t).toBe('True');
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
      `spec.konnector.deploy is not true, so no konnector runs for this app cluster: set spec.konnector.deploy to true, or run one yourself in namespace ${ROOT} as ServiceAccount klutch-binder with the flags --control-plane-mode --app-cluster-kubeconfig-secret-name=app-cluster-kubeconfig --app-cluster-kubeconfig-secret-namespace=${ROOT} --app-cluster-kubeconfig-secret-key=kubeconfig --binding-root-namespace=${ROOT} --lease-namespace=$(POD_NAMESPACE) --probe-address=:8080 (docs/app-cluster-binding.md)`,
    );
  });

  it('refuses a kubeconfig Secret outside its own namespace, and does nothing else', async () => {
    const w = world({});
    await reconcileAppClusterBinding(w.d, acb({ secretNamespace: 'kube-system' }));
    expect(w.cond('SecretValid')).toMatchObject({ status: 'False', reason: 'SecretNamespaceForbidden' });
    expect(w.cond('SecretValid')!.message).toContain('move the Secret into team-a');
    expect(w.cond('Ready')?.status).toBe('False');
    expect(w.log).toEqual([]);
  });

  it('refuses a kubeconfig that may not do what the konnector needs, naming the missing permissions', async () => {
    const w = world({ access: { missing: ['create customresourcedefinitions.apiextensions.k8s.io'] } });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond('AppClusterAccess')).toMatchObject({ status: 'False', reason: 'Forbidden' });
    expect(w.cond('AppClusterAccess')!.message).toContain('may not create customresourcedefinitions.apiextensions.k8s.io');
    expect(w.cond('AppClusterAccess')!.message).toContain('dist/app-cluster/control-plane-konnector/clusterrole.yaml');
    expect(w.log).toEqual([]);
  });

  it("refuses only the API whose permissions the app cluster's kubeconfig lacks", async () => {
    const w = world({ access: { missing: ['delete postgresqlinstances.anynines.com'] } });
    await reconcileAppClusterBinding(w.d, acb());
    expect(w.cond(PG)).toMatchObject({ status: 'False', reason: 'AppClusterForbidden' });
    expect(w.log).not.toContain(`request cluster-x ${PG}`);
    expect(w.cond('Ready')?.status).toBe('False');
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
    const w = world({ bindings: [readyBinding(PG)] });
    expect(await reconcileAppClusterBinding(w.d, acb({ deleting: true, finalizer: true }))).toEqual({ requeueAfterMs: 2_000 });
    expect(w.log).toEqual([`delete binding ${ROOT}/${PG}`]);
    expect(w.cond('Ready')).toMatchObject({ status: 'False', reason: 'Deleting' });
    const gone = world({ bindings: [] });
    expect(await reconcileAppClusterBinding(gone.d, acb({ deleting: true, finalizer: true }))).toBeUndefined();
    expect(gone.log).toEqual([
      `delete deployment ${ROOT}/konnector-app1`,
      'delete namespace cluster-x',
      `delete namespace ${ROOT}`,
      'finalizer false',
    ]);
  });
});
