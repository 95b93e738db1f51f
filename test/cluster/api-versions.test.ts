/**
 * App clusters pinned to a version of an API, on one control plane (issue 36, item 2): the versioned Backup of
 * test/support/versioned-api.ts (v1 deprecated, v2 stored) as synth writes it — its claim CRD with the conversion
 * webhook, served by the conversion server as a process, and its two export templates — on provider cluster `a` with
 * our bundled backend (machine binding, so `kubectl bind` runs without a browser). App cluster `b` binds the API as
 * an operator's default (`backups`: v1); a second app cluster binds v2, asking for it as Klutch's export requests do
 * (`resources[].versions`). Each konnector runs as a process, as in bind-machine.test.ts.
 *
 * It shows: each app cluster has a CRD of its own version alone; a claim written in each reaches the control plane,
 * stored once in v2 and readable in both; status written there in v2 comes down to each in its own version; a change
 * in v1 goes up as v2's field; and the konnectors carry it all without a second write of either spec (a conversion that
 * lost a field would make the konnector rewrite it forever).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONVERSION_TABLE_FILE, PACKAGE_DIR, render } from '../../synth/synth';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { claimCrd, type XrdObject } from '../../lib/xcrd';
import { parseYaml } from '../../harness/crossplane/catalog';
import { startConversionProcess, type RunningConversionServer } from '../../harness/parts/conversion-server';
import { startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { waitEstablished } from '../../harness/parts/bind-backend';
import { startCli } from '../../harness/parts/cli';
import { konnectorKubeconfig, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { type ClusterInfo, type ControlPlanes, startControlPlanes } from '../../harness/cluster/control-plane';
import { applyAt, eventually, getObject, kubeFor, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import type { OidcTestClient } from '../../harness/login/oidc';
import { cluster, controlPlanes } from '../support/cluster';
import { releaseBindings } from '../support/bind-cleanup';
import { V1_DEPRECATION, versionedBackup } from '../support/versioned-api';
import { KEPT_ANNOTATION } from '../../lib/conversion';

type O = WireObject;
const id = randomBytes(3).toString('hex');
const group = `vers${id}.klutch-kit.test`;
const API = `backups.${group}`;
const RESOURCE = `https://versions-${id}.klutch-kit.test/`;
const ci: OidcTestClient = { clientId: `ci-${id}`, clientSecret: randomBytes(24).toString('base64url'), redirectUris: [], machine: {} };
const ns = `kbv-${id}`; // the konnector's namespace in each app cluster
const app = `kbva-${id}`; // where the app's claims live
const claimsAt = (version: string, namespace?: string) => `/apis/${group}/${version}${namespace ? `/namespaces/${namespace}` : ''}/backups`;

let s: BackendSuite;
let a: ClusterInfo;
let own: ControlPlanes;
/** The app clusters by the version each binds. */
const apps: Record<'v1' | 'v2', { info: ClusterInfo; kube: Kube; konnector?: KonnectorProcess }> = {} as never;
let ka: Kube;
let conversion: RunningConversionServer;
let logDir: string;

/** `kubectl bind` of the API into `version`'s app cluster (v2 asked for; v1 the default) and its konnector. */
async function bind(version: 'v1' | 'v2'): Promise<void> {
  const target = apps[version];
  const file = join(logDir, `request-${version}.yaml`);
  const versions = version === 'v2' ? '\n    versions: [v2]' : '';
  writeFileSync(
    file,
    `apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nmetadata:\n  name: ${API}\nspec:\n  resources:\n  - group: ${group}\n    resource: backups${versions}\n`,
  );
  const secret = join(logDir, 'ci-client-secret');
  writeFileSync(secret, `${ci.clientSecret}\n`, { mode: 0o600 });
  const run = await startCli(
    [
      `${s.backend.url}/export`,
      '--client-id',
      ci.clientId,
      '--client-secret-file',
      secret,
      '--oidc-issuer',
      s.idp.issuer,
      '-f',
      file,
      '--accept-permission-claims',
      '--wait=60s',
      '-n',
      ns,
    ],
    { kubeconfig: target.info.kubeconfig, closeStdin: true, env: { NODE_EXTRA_CA_CERTS: s.idp.caFile } },
  );
  await run.printed(`Konnector installed in namespace ${ns}`);
  target.konnector = await startKonnector({
    kubeconfig: await konnectorKubeconfig(target.info, ns),
    namespace: ns,
    logDir: join(logDir, version),
    args: ['--heartbeat-interval=2s'],
  });
  const r = await run.done;
  writeFileSync(join(logDir, `kubectl-bind-${version}.log`), `exit ${r.code}\n${r.stderr}\n${r.stdout}`);
  if (r.code !== 0) throw new Error(`kubectl bind (${version}) exited ${r.code ?? r.signal}:\n${r.stderr}\n${r.stdout}`);
}

beforeAll(async () => {
  const [ca, cb] = await Promise.all([cluster('a'), cluster('b')]);
  a = ca;
  ka = kubeFor(a);
  // A second app cluster of its own: one API server has one CRD of a name, so two versions need two clusters.
  own = await startControlPlanes({ clusters: ['versions-app'], binary: kubeBinaryPath(), log: () => undefined });
  apps.v1 = { info: cb, kube: kubeFor(cb) };
  apps.v2 = { info: own.clusters['versions-app']!, kube: kubeFor(own.clusters['versions-app']!) };
  logDir = join((await controlPlanes()).runDir, 'api-versions', id);
  mkdirSync(logDir, { recursive: true });

  // The table does not name the server, so it is rendered before the server's URL and CA exist.
  const api = versionedBackup({ group, deprecated: true });
  const table = render({ apis: [api], outdir: 'unused', conversion: { url: 'https://x', caBundle: 'x' } }).get(CONVERSION_TABLE_FILE)!;
  conversion = await startConversionProcess({ table, dir: join(logDir, 'conversion') });
  const files = render({ apis: [api], outdir: 'unused', conversion: { url: conversion.url, caBundle: conversion.ca } });
  const crd = claimCrd(parseYaml(files.get(`${PACKAGE_DIR}/apis/vbackup/definition.yaml`)!)[0] as unknown as XrdObject) as unknown as O;
  await applyAt(ka, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${API}`, crd);
  await waitEstablished(ka, [API]);

  s = await startBackendSuite(a, {
    users: 1,
    args: ['--machine-bind', `--machine-bind-resource=${RESOURCE}`],
    extraClients: [ci],
    resourceServers: [{ resource: RESOURCE, audience: 'klutch-bind' }],
  });
  for (const name of ['backups', 'backups-v2']) {
    const t = parseYaml(files.get(`control-plane/export-templates/${name}.yaml`)!)[0] as O;
    await applyAt(
      ka,
      `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${s.templateNamespace}/apiserviceexporttemplates/${name}`,
      { ...t, metadata: { ...t.metadata, namespace: s.templateNamespace } },
    );
  }
  for (const v of ['v1', 'v2'] as const) await requireOk(apps[v].kube, 'POST', '/api/v1/namespaces', { metadata: { name: app } });
  await Promise.all([bind('v1'), bind('v2')]);
}, 300_000);

afterAll(async () => {
  for (const v of ['v1', 'v2'] as const) {
    const t = apps[v];
    if (!t?.kube) continue;
    await releaseBindings(t.kube, ns, [API], t.konnector ? 30_000 : 0);
    await t.konnector?.proc.stop();
    await t.kube.request('DELETE', `/api/v1/namespaces/${app}`);
    await t.kube.request('DELETE', `/api/v1/namespaces/${ns}`);
    await t.kube.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${API}`);
    for (const kind of ['clusterroles', 'clusterrolebindings'])
      for (const name of [`${ns}-konnector`, `${ns}-konnector-${API}`])
        await t.kube.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${name}`);
  }
  await s?.stop();
  await ka?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${API}`);
  await conversion?.stop();
  await own?.stop();
}, 120_000);

/** The control plane's copy of the claim `name` (written by the konnector into a provider namespace), read in `version`. */
async function upstream(name: string, version: 'v1' | 'v2'): Promise<O | undefined> {
  const list = await getObject(ka, claimsAt(version));
  return ((list?.items ?? []) as O[]).find((o) => o.metadata.name === name);
}

describe('app clusters pinned to a version of one API (issue 36, item 2)', () => {
  it('gives each app cluster a CRD of the version it bound, and nothing else', async () => {
    for (const v of ['v1', 'v2'] as const) {
      const crd = await getObject(apps[v].kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${API}`);
      expect(
        crd!.spec.versions.map((x: O) => x.name),
        `the CRD in the app cluster bound to ${v}`,
      ).toEqual([v]);
      expect(crd!.spec.conversion?.strategy ?? 'None').toBe('None');
    }
  });

  it('carries a claim written in each version up, stored once in v2, and status written there down in each version', async () => {
    /** A Backup claim `name` written in the app cluster bound to `v`, in `v`. */
    const write = (v: 'v1' | 'v2', name: string, spec: O) =>
      apps[v].kube.request('POST', claimsAt(v, app), { apiVersion: `${group}/${v}`, kind: 'Backup', metadata: { name }, spec });
    const v1 = await write('v1', 'nightly', { instance: 'pg-a', serviceInstanceType: 'postgresql', note: 'before the migration' });
    expect(v1.code, JSON.stringify(v1.body)).toBe(201);
    // The deprecation travels with the export: the app cluster's API server warns the developer.
    expect(v1.warnings ?? []).toContain(V1_DEPRECATION);
    const v2 = await write('v2', 'hourly', { instanceRef: 'pg-b', serviceInstanceType: 'postgresql', retention: '30d' });
    expect(v2.code, JSON.stringify(v2.body)).toBe(201);

    // Up: each reaches the control plane, where each reads in both versions.
    const fromV1 = await eventually('the v1 claim on the control plane', () => upstream('nightly', 'v2'), 60_000);
    const fromV2 = await eventually('the v2 claim on the control plane', () => upstream('hourly', 'v2'), 60_000);
    expect(fromV1.spec).toMatchObject({ instanceRef: 'pg-a', serviceInstanceType: 'postgresql', retention: '7d' });
    expect(fromV1.spec.note).toBeUndefined();
    expect((await upstream('nightly', 'v1'))!.spec).toMatchObject({ instance: 'pg-a', note: 'before the migration' });
    expect(fromV2.spec).toMatchObject({ instanceRef: 'pg-b', retention: '30d' });
    expect((await upstream('hourly', 'v1'))!.spec).toMatchObject({ instance: 'pg-b' });

    // Down: status written in the storage version, as Crossplane writes it, reaches each app cluster in its own.
    const ready = { type: 'Ready', status: 'True', reason: 'Available', message: '', lastTransitionTime: new Date().toISOString() };
    for (const o of [fromV1, fromV2])
      await requireOk(
        ka,
        'PATCH',
        `${claimsAt('v2', o.metadata.namespace)}/${o.metadata.name}/status`,
        { status: { conditions: [ready] } },
        'application/merge-patch+json',
      );
    for (const [v, name] of [
      ['v1', 'nightly'],
      ['v2', 'hourly'],
    ] as const) {
      const seen = await eventually(`Ready on ${name} in the app cluster bound to ${v}`, async () => {
        const c = await getObject(apps[v].kube, `${claimsAt(v, app)}/${name}`);
        return c?.status?.conditions?.some((x: O) => x.type === 'Ready' && x.status === 'True') ? c : undefined;
      });
      expect(seen.apiVersion).toBe(`${group}/${v}`);
    }

    // A change in v1 goes up as v2's field.
    await requireOk(
      apps.v1.kube,
      'PATCH',
      `${claimsAt('v1', app)}/nightly`,
      { spec: { instance: 'pg-c' } },
      'application/merge-patch+json',
    );
    const moved = await eventually('the change on the control plane', async () => {
      const o = await upstream('nightly', 'v2');
      return o?.spec.instanceRef === 'pg-c' ? o : undefined;
    });
    expect(moved.spec.retention).toBe('7d');
    // Each spec written once per change: a round trip that lost a field (v1's note, v2's retention) would show as a
    // konnector writing the spec again and again.
    const generations = async () => [
      (await upstream('nightly', 'v2'))!.metadata.generation,
      (await upstream('hourly', 'v2'))!.metadata.generation,
    ];
    expect(await generations()).toEqual([2, 1]);
    await new Promise((r) => setTimeout(r, 3_000)); // a few of the konnectors' resyncs (heartbeat 2 s)
    expect(await generations()).toEqual([2, 1]);
  }, 180_000);

  it("keeps a v1 app cluster's claims moving with the control plane's conversion webhook gone: its konnector converts", async () => {
    // The v1 export names the storage version and the conversions: the konnector reads and writes the control plane
    // in v2 and converts itself, so no webhook call is in its path (Klutch's konnector, which ignores the annotation,
    // would go through the webhook). With the server stopped, the control plane's API server takes no write in v1 at all.
    await conversion.stop();
    // (A write: reads may be served from the API server's watch cache of v1, which holds objects converted before.)
    const refused = await ka.request('POST', claimsAt('v1', 'default'), {
      apiVersion: `${group}/v1`,
      kind: 'Backup',
      metadata: { name: 'direct' },
      spec: { instance: 'pg-x', serviceInstanceType: 'postgresql' },
    });
    expect(refused.code, `a write in v1 to the control plane without its webhook: ${JSON.stringify(refused.body)}`).toBeGreaterThanOrEqual(
      500,
    );

    const c = await apps.v1.kube.request('POST', claimsAt('v1', app), {
      apiVersion: `${group}/v1`,
      kind: 'Backup',
      metadata: { name: 'weekly' },
      spec: { instance: 'pg-d', serviceInstanceType: 'postgresql', note: 'written without the webhook' },
    });
    expect(c.code, JSON.stringify(c.body)).toBe(201);
    const up = await eventually('the v1 claim on the control plane, in v2', () => upstream('weekly', 'v2'), 60_000);
    expect(up.spec).toMatchObject({ instanceRef: 'pg-d', serviceInstanceType: 'postgresql', retention: '7d' });
    // v1's field v2 lacks is kept in the annotation, as the webhook keeps it.
    expect(JSON.parse(up.metadata.annotations[KEPT_ANNOTATION] as string)).toEqual({ 'spec.note': 'written without the webhook' });

    const ready = { type: 'Ready', status: 'True', reason: 'Available', message: '', lastTransitionTime: new Date().toISOString() };
    await requireOk(
      ka,
      'PATCH',
      `${claimsAt('v2', up.metadata.namespace)}/weekly/status`,
      { status: { conditions: [ready] } },
      'application/merge-patch+json',
    );
    await eventually('Ready on weekly in the app cluster bound to v1', async () => {
      const o = await getObject(apps.v1.kube, `${claimsAt('v1', app)}/weekly`);
      return o?.status?.conditions?.some((x: O) => x.type === 'Ready' && x.status === 'True') ? o : undefined;
    });
    await new Promise((r) => setTimeout(r, 3_000)); // a few of the konnector's resyncs: nothing written again
    expect((await upstream('weekly', 'v2'))!.metadata.generation).toBe(1);
  }, 120_000);
});
