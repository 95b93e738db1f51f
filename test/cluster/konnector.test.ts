/**
 * The konnector end to end on the shared clusters: `a` is the control plane (provider side made the way a backend
 * leaves it, harness/parts/provider-side.ts), `b` the app cluster, where the konnector runs as its bundled process
 * with the synthesized least-privilege RBAC (its own ServiceAccount token), serving the bindings of one namespace.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations, SYNCER_FINALIZER, type AcceptablePermissionClaim, type PermissionClaim } from '../../exports/bind-api';
import { render } from '../../synth/synth';
import { loadCatalog, parseYaml } from '../../harness/crossplane/catalog';
import { cluster, controlPlanes } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import {
  bindApp,
  createBinding,
  grantApi,
  installKonnectorAccess,
  startKonnector,
  type KonnectorProcess,
} from '../../harness/parts/konnector';
import { eventually, getObject, kubeFor, requireOk, type Kube } from '../../harness/cluster/kube';
import { removeLeftoverCrd } from '../support/bind-cleanup';
import { providerSide, type ProviderSide } from '../../harness/parts/provider-side';
import { claimCrd, type Crd, type XrdObject } from '../../lib/xcrd';
import { formatVersion, parseVersion } from '../../lib/semver';
import { BACKEND_VERSION_ANNOTATION } from '../../lib/version';
import { KONNECTOR_VERSION } from '../../konnector/version';

const files = render({ apis: await loadCatalog(), outdir: 'unused' });
const crdOf = (api: string): Crd =>
  claimCrd(parseYaml(files.get(`packages/dataservices/apis/${api}/definition.yaml`)!)[0] as unknown as XrdObject);
const CLAIMS: PermissionClaim[] = [
  { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' } },
  { group: '', resource: 'configmaps', version: 'v1', selector: { owner: 'Provider' } },
];
const accepted: AcceptablePermissionClaim[] = CLAIMS.map((c) => ({ ...c, state: 'Accepted' }));

let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let provider: ProviderSide;
let konnector: KonnectorProcess;
const ns = `kn-${Math.random().toString(36).slice(2, 8)}`; // the konnector's namespace in b
const app = `app-${Math.random().toString(36).slice(2, 8)}`; // where the app's claims live in b
const PG = '/apis/anynines.com/v1';
const pg = (namespace: string, name = '') => `${PG}/namespaces/${namespace}/postgresqlinstances${name ? `/${name}` : ''}`;
const binding = (name: string) => `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicebindings/${name}`;
type O = Record<string, any>;
const condition = (o: O | undefined, type: string) => (o?.status?.conditions ?? []).find((c: O) => c.type === type);
/** The provider namespace the backend assigned to an app namespace. */
const mapped = (namespace: string) =>
  eventually(
    `APIServiceNamespace ${namespace} assigned`,
    async () =>
      (await getObject(ka, `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/apiservicenamespaces/${namespace}`))
        ?.status?.namespace as string | undefined,
  );

beforeAll(async () => {
  a = await cluster('a');
  b = await cluster('b');
  ka = kubeFor(a);
  kb = kubeFor(b);
  // An earlier suite of this worker may have left the API's CRD in b, owned by its binding (test/support/bind-cleanup.ts).
  await removeLeftoverCrd(kb, 'postgresqlinstances.anynines.com');
  provider = await providerSide({ provider: a, crd: crdOf('postgresql'), permissionClaims: CLAIMS });
  const kubeconfig = await installKonnectorAccess(b, ns, [
    { group: 'anynines.com', resource: 'postgresqlinstances', claimed: ['secrets', 'configmaps'] },
  ]);
  await requireOk(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: app } });
  konnector = await startKonnector({
    kubeconfig,
    namespace: ns,
    logDir: join((await controlPlanes()).runDir, 'konnector', ns),
    args: ['--heartbeat-interval=2s', '--log-level=debug'],
  });
  await bindApp(b, ns, provider, provider.exportName, accepted);
}, 120_000);

afterAll(async () => {
  await konnector?.proc.stop();
  await provider?.remove();
  await kb?.request('DELETE', `/api/v1/namespaces/${app}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
});

describe('binding', () => {
  it('becomes Ready: the CRD appears in the app cluster, owned by the binding', async () => {
    const ready = await eventually('binding Ready', async () => {
      const o = await getObject(kb, binding(provider.exportName));
      return condition(o, 'Ready')?.status === 'True' ? o : undefined;
    });
    for (const t of ['SecretValid', 'Connected', 'SchemaInSync', 'InformersSynced', 'Heartbeating'])
      expect(condition(ready, t)?.status, t).toBe('True');
    expect(ready!.status.providerPrettyName).toBe('klutch-kit test provider');
    const crd = await getObject(kb, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${provider.exportName}`);
    expect(crd?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'APIServiceBinding', uid: ready!.metadata.uid, controller: true }),
    ]);
  });

  it('heartbeats into the ClusterBinding with its version', async () => {
    const cb = await eventually('a heartbeat', async () => {
      const o = await getObject(ka, `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/clusterbindings/cluster`);
      return o?.status?.lastHeartbeatTime ? o : undefined;
    });
    expect(cb!.status).toMatchObject({ konnectorVersion: 'v0.1.0', heartbeatInterval: '4s' });
    const later = await eventually('a later heartbeat', async () => {
      const o = await getObject(ka, `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/clusterbindings/cluster`);
      return o?.status?.lastHeartbeatTime !== cb!.status.lastHeartbeatTime ? o : undefined;
    });
    expect(Date.parse(later!.status.lastHeartbeatTime)).toBeGreaterThan(Date.parse(cb!.status.lastHeartbeatTime));
  });

  it('says on the binding, and is not Ready, while the control plane states an older release than its own; Ready again once it does not', async () => {
    const cbPath = `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/clusterbindings/cluster`;
    // As the backend stamps it (lib/version.ts): a control plane of an older release than this konnector's.
    const own = parseVersion(KONNECTOR_VERSION)!;
    const older = formatVersion(
      own.patch > 0
        ? { ...own, patch: own.patch - 1 }
        : own.minor > 0
          ? { ...own, minor: own.minor - 1 }
          : { ...own, major: own.major - 1 },
    );
    const stamp = (v: string | null) =>
      requireOk(ka, 'PATCH', cbPath, { metadata: { annotations: { [BACKEND_VERSION_ANNOTATION]: v } } }, 'application/merge-patch+json');
    await stamp(older);
    try {
      const ready = await eventually('the binding not Ready: the control plane is older', async () => {
        const c = condition(await getObject(kb, binding(provider.exportName)), 'Ready');
        return c?.reason === 'KonnectorNewer' ? c : undefined;
      });
      expect(ready).toMatchObject({ status: 'False', severity: 'Warning' });
      expect(ready.message).toContain(
        `this konnector (${KONNECTOR_VERSION}) is newer than the control plane (${older}), which is not supported`,
      );
      await stamp(KONNECTOR_VERSION);
      const same = await eventually('the binding Ready again on the same release', async () => {
        const o = await getObject(kb, binding(provider.exportName));
        return condition(o, 'Ready')?.status === 'True' ? o : undefined;
      });
      expect(condition(same, 'ControlPlaneVersion')?.message).toBe(`control plane ${KONNECTOR_VERSION}, konnector ${KONNECTOR_VERSION}`);
    } finally {
      await stamp(null);
    }
  });
});

describe('a claim, end to end', () => {
  const spec = {
    service: 'a9s-postgresql17',
    plan: 'postgresql-single-nano',
    parameters: { maxConnections: 200 },
    compositionRef: { name: 'a9s-postgresql' },
  };
  let pns: string;

  it('goes up: same name and spec in the mapped provider namespace, finalizer and bound annotation on both sides', async () => {
    await requireOk(kb, 'POST', pg(app), {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'db', namespace: app, labels: { team: 'x' } },
      spec,
    });
    pns = await mapped(app);
    expect(pns).toBe(`${provider.clusterNamespace}-${app}`);
    const up = await eventually('the claim upstream', () => getObject(ka, pg(pns, 'db')));
    expect(up!.spec).toMatchObject(spec);
    expect(up!.metadata.labels).toEqual({ team: 'x' });
    expect(up!.metadata.annotations[Annotations.bound]).toBe('true');
    expect(up!.metadata.managedFields.map((m: O) => m.manager)).toContain('klutch.anynines.com');
    const down = await getObject(kb, pg(app, 'db'));
    expect(down!.metadata.finalizers).toContain(SYNCER_FINALIZER);
    expect(down!.metadata.annotations[Annotations.bound]).toBe('true');
  });

  it('brings status down', async () => {
    const status = {
      managed: { state: 'provisioned' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2025-01-01T00:00:00Z' }],
    };
    await requireOk(ka, 'PATCH', `${pg(pns, 'db')}/status`, { status }, 'application/merge-patch+json');
    const down = await eventually('status in the app cluster', async () => {
      const o = await getObject(kb, pg(app, 'db'));
      return o?.status?.managed?.state === 'provisioned' ? o : undefined;
    });
    expect(down!.status).toEqual(status);
  });

  it('brings the credentials Secret the claim owns down as <claim>-creds, following updates and deletion', async () => {
    const up = await getObject(ka, pg(pns, 'db'));
    const owner = { apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', name: 'db', uid: up!.metadata.uid };
    const secret = (password: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db-creds', namespace: pns, ownerReferences: [owner] },
      data: { password: Buffer.from(password).toString('base64') },
    });
    await requireOk(ka, 'POST', `/api/v1/namespaces/${pns}/secrets`, secret('s3cret'));
    // A Secret of the provider namespace that no claim owns stays where it is (Klutch would copy it).
    await requireOk(ka, 'POST', `/api/v1/namespaces/${pns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'provider-internal', namespace: pns },
      data: { x: 'eA==' },
    });
    const down = await eventually('db-creds in the app namespace', () => getObject(kb, `/api/v1/namespaces/${app}/secrets/db-creds`));
    expect(Buffer.from(down!.data.password, 'base64').toString()).toBe('s3cret');
    expect(down!.metadata.annotations[Annotations.resourceOwner]).toBe('Provider');
    const consumerClaim = await getObject(kb, pg(app, 'db'));
    expect(down!.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'PostgresqlInstance', name: 'db', uid: consumerClaim!.metadata.uid }),
    ]);
    await requireOk(ka, 'PUT', `/api/v1/namespaces/${pns}/secrets/db-creds`, secret('n3w'));
    await eventually('the new password', async () => {
      const o = await getObject(kb, `/api/v1/namespaces/${app}/secrets/db-creds`);
      return o && Buffer.from(o.data.password, 'base64').toString() === 'n3w' ? true : undefined;
    });
    expect(await getObject(kb, `/api/v1/namespaces/${app}/secrets/provider-internal`)).toBeUndefined();
    await requireOk(ka, 'DELETE', `/api/v1/namespaces/${pns}/secrets/db-creds`);
    await eventually('db-creds gone from the app namespace', async () =>
      (await getObject(kb, `/api/v1/namespaces/${app}/secrets/db-creds`)) ? undefined : true,
    );
  });

  it('carries spec changes up, removed fields included', async () => {
    await requireOk(kb, 'PATCH', pg(app, 'db'), { spec: { parameters: { maxConnections: 300 } } }, 'application/merge-patch+json');
    await eventually('maxConnections 300 upstream', async () =>
      (await getObject(ka, pg(pns, 'db')))?.spec.parameters.maxConnections === 300 ? true : undefined,
    );
    await requireOk(kb, 'PATCH', pg(app, 'db'), { spec: { parameters: null } }, 'application/merge-patch+json');
    await eventually('parameters removed upstream', async () =>
      (await getObject(ka, pg(pns, 'db')))?.spec.parameters === undefined ? true : undefined,
    );
  });

  it('deletes upstream before it releases the claim', async () => {
    await requireOk(kb, 'DELETE', pg(app, 'db'));
    await eventually('the claim gone from the app cluster', async () => ((await getObject(kb, pg(app, 'db'))) ? undefined : true));
    expect(await getObject(ka, pg(pns, 'db'))).toBeUndefined();
  });

  it('deletes the copy of a claim that disappeared behind its back', async () => {
    await requireOk(kb, 'POST', pg(app), {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'gone', namespace: app },
      spec,
    });
    await eventually('gone upstream', () => getObject(ka, pg(pns, 'gone')));
    // A user removes the finalizer by hand and deletes it: the konnector still must not leave the copy behind.
    await requireOk(kb, 'PATCH', pg(app, 'gone'), { metadata: { finalizers: null } }, 'application/merge-patch+json');
    await requireOk(kb, 'DELETE', pg(app, 'gone'));
    await eventually('the orphaned copy deleted upstream', async () => ((await getObject(ka, pg(pns, 'gone'))) ? undefined : true));
  });
});

describe('namespaces', () => {
  it('asks the provider to drop an app namespace once it is gone', async () => {
    const gone = `app-${Math.random().toString(36).slice(2, 8)}`;
    await requireOk(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: gone } });
    const spec = { service: 'a9s-postgresql17', plan: 'postgresql-single-nano', compositionRef: { name: 'a9s-postgresql' } };
    await requireOk(kb, 'POST', pg(gone), {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'db', namespace: gone },
      spec,
    });
    const pns = await mapped(gone);
    await eventually('the claim upstream', () => getObject(ka, pg(pns, 'db')));
    await requireOk(kb, 'DELETE', `/api/v1/namespaces/${gone}`);
    const sn = `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/apiservicenamespaces/${gone}`;
    await eventually('the APIServiceNamespace deleted', async () => ((await getObject(ka, sn)) ? undefined : true), 90_000);
    expect(await getObject(ka, pg(pns, 'db')), 'the claim was deleted upstream before its namespace went').toBeUndefined();
  }, 120_000);
});

describe('permissions and ownership', () => {
  it('says Forbidden, naming the file to apply, for an API it was not granted; works once granted', async () => {
    const name = await provider.exportApi(crdOf('mariadb'), []);
    await createBinding(kb, ns, name, (await getObject(kb, binding(provider.exportName)))!.spec.kubeconfigSecretRef.name);
    const forbidden = await eventually('InformersSynced Forbidden', async () => {
      const c = condition(await getObject(kb, binding(name)), 'InformersSynced');
      return c?.reason === 'Forbidden' ? c : undefined;
    });
    expect(forbidden.message).toContain('may not get mariadbinstances.anynines.com');
    expect(forbidden.message).toContain('grant it access to mariadbinstances.anynines.com: run kubectl bind');
    expect(forbidden.message).not.toMatch(/dist\/|docs\//);
    expect(condition(await getObject(kb, binding(name)), 'Ready')).toMatchObject({ status: 'False', reason: 'Forbidden' });
    await grantApi(b, ns, { group: 'anynines.com', resource: 'mariadbinstances' });
    await eventually(
      'Ready once granted',
      async () => (condition(await getObject(kb, binding(name)), 'Ready')?.status === 'True' ? true : undefined),
      30_000,
    );
  });

  it('refuses to overwrite a CRD it does not own, and says so on the binding', async () => {
    const crd = crdOf('mongodb');
    await requireOk(kb, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    const name = await provider.exportApi(crd, []);
    await grantApi(b, ns, { group: 'anynines.com', resource: 'mongodbinstances' });
    await createBinding(kb, ns, name, (await getObject(kb, binding(provider.exportName)))!.spec.kubeconfigSecretRef.name);
    const c = await eventually('SchemaInSync False', async () => {
      const x = condition(await getObject(kb, binding(name)), 'SchemaInSync');
      return x?.status === 'False' ? x : undefined;
    });
    expect(c).toMatchObject({ reason: 'ForeignCustomResourceDefinition' });
    expect(c.message).toContain(`CustomResourceDefinition ${name} exists and is owned by nobody the konnector knows`);
    const after = await getObject(kb, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    expect(after!.metadata.ownerReferences, 'the CRD is untouched').toBeUndefined();
    // Deleting a binding that owns nothing leaves the foreign CRD alone.
    await requireOk(kb, 'DELETE', binding(name));
    await eventually('the binding gone', async () => ((await getObject(kb, binding(name))) ? undefined : true));
    expect(await getObject(kb, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)).toBeDefined();
    await requireOk(kb, 'DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
  });
});

describe('kubeconfig rotation', () => {
  it('copies a rotated provider kubeconfig down and keeps syncing after the old token is revoked', async () => {
    const secretName = (await getObject(kb, binding(provider.exportName)))!.spec.kubeconfigSecretRef.name;
    const revokeOld = await provider.rotate();
    await eventually('the new kubeconfig in the app cluster', async () => {
      const s = await getObject(kb, `/api/v1/namespaces/${ns}/secrets/${secretName}`);
      return s && Buffer.from(s.data.kubeconfig, 'base64').toString() === provider.kubeconfig() ? true : undefined;
    });
    await revokeOld();
    const spec = { service: 'a9s-postgresql17', plan: 'postgresql-single-nano', compositionRef: { name: 'a9s-postgresql' } };
    await requireOk(kb, 'POST', pg(app), {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'after-rotation', namespace: app },
      spec,
    });
    const pns = await mapped(app);
    await eventually('a claim created after the rotation reaches the provider', () => getObject(ka, pg(pns, 'after-rotation')));
    const status = { managed: { state: 'rotated' } };
    await requireOk(ka, 'PATCH', `${pg(pns, 'after-rotation')}/status`, { status }, 'application/merge-patch+json');
    await eventually('its status comes down', async () =>
      (await getObject(kb, pg(app, 'after-rotation')))?.status?.managed?.state === 'rotated' ? true : undefined,
    );
    expect(condition(await getObject(kb, binding(provider.exportName)), 'Ready')?.status).toBe('True');
  });
});

describe('schema changes', () => {
  it('follows a changed export into the CRD it owns', async () => {
    const path = `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/apiserviceexports/${provider.exportName}`;
    const exp = await getObject(ka, path);
    const versions = exp!.spec.versions.map((v: O) => ({
      ...v,
      additionalPrinterColumns: [...(v.additionalPrinterColumns ?? []), { name: 'Konnector', type: 'string', jsonPath: '.spec.plan' }],
    }));
    await requireOk(ka, 'PATCH', path, { spec: { versions } }, 'application/merge-patch+json');
    await eventually('the new printer column in the app cluster', async () => {
      const crd = await getObject(kb, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${provider.exportName}`);
      return crd?.spec.versions[0].additionalPrinterColumns?.some((c: O) => c.name === 'Konnector') ? true : undefined;
    });
  });
});

describe('claimed access that changes', () => {
  it('reads claimed Secrets namespace-wide once the provider grants it, after a first review that said no', async () => {
    // A provider namespace whose Secrets the consumer may not list yet, as when the API server's authorizer lags
    // the RoleBinding it was just given: the konnector falls back to the Role that shares by name, which is not there.
    const role = `/apis/rbac.authorization.k8s.io/v1/clusterroles/klutch-binder-${provider.clusterNamespace}`;
    const rules: O[] = (await getObject(ka, role))!.rules;
    const merge = 'application/merge-patch+json';
    await requireOk(ka, 'PATCH', role, { rules: rules.filter((r) => !r.resources.includes('secrets')) }, merge);
    const late = `late-${Math.random().toString(36).slice(2, 8)}`;
    try {
      await requireOk(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: late } });
      const spec = { service: 'a9s-postgresql17', plan: 'postgresql-single-nano', compositionRef: { name: 'a9s-postgresql' } };
      await requireOk(kb, 'POST', pg(late), {
        apiVersion: 'anynines.com/v1',
        kind: 'PostgresqlInstance',
        metadata: { name: 'db', namespace: late },
        spec,
      });
      const pns = await mapped(late);
      const up = await eventually('the claim upstream', () => getObject(ka, pg(pns, 'db')));
      await eventually('the binding names the refused read', async () => {
        const c = condition(await getObject(kb, binding(provider.exportName)), 'InformersSynced');
        return c?.status === 'False' && /klutch-binder-claimed/.test(c.message) ? true : undefined;
      });
      await requireOk(ka, 'PATCH', role, { rules }, merge);
      const owner = { apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', name: 'db', uid: up!.metadata.uid };
      await requireOk(ka, 'POST', `/api/v1/namespaces/${pns}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-creds', namespace: pns, ownerReferences: [owner] },
        data: { password: Buffer.from('late').toString('base64') },
      });
      const down = await eventually('db-creds in the late namespace', () => getObject(kb, `/api/v1/namespaces/${late}/secrets/db-creds`));
      expect(Buffer.from(down!.data.password, 'base64').toString()).toBe('late');
      await eventually('the binding synced again', async () =>
        condition(await getObject(kb, binding(provider.exportName)), 'InformersSynced')?.status === 'True' ? true : undefined,
      );
    } finally {
      await requireOk(ka, 'PATCH', role, { rules }, merge);
      await kb.request('DELETE', pg(late, 'db'));
      await eventually('the late claim gone', async () => ((await getObject(kb, pg(late, 'db'))) ? undefined : true));
      await kb.request('DELETE', `/api/v1/namespaces/${late}`);
    }
  }, 90_000);
});

describe('deleting a binding', () => {
  it('deletes its claims upstream first, then its CRD, and strands nothing behind a finalizer', async () => {
    const spec = { service: 'a9s-postgresql17', plan: 'postgresql-single-nano', compositionRef: { name: 'a9s-postgresql' } };
    for (const n of ['keep-1', 'keep-2'])
      await requireOk(kb, 'POST', pg(app), {
        apiVersion: 'anynines.com/v1',
        kind: 'PostgresqlInstance',
        metadata: { name: n, namespace: app },
        spec,
      });
    const pns = await mapped(app);
    for (const n of ['keep-1', 'keep-2']) await eventually(`${n} upstream`, () => getObject(ka, pg(pns, n)));
    await requireOk(kb, 'DELETE', binding(provider.exportName));
    await eventually('the binding gone', async () => ((await getObject(kb, binding(provider.exportName))) ? undefined : true), 60_000);
    expect((await ka.request('GET', pg(pns))).body.items, 'no claim left upstream').toEqual([]);
    expect(
      await getObject(kb, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${provider.exportName}`),
      'the CRD it owned is gone',
    ).toBeUndefined();
  }, 90_000);
});
