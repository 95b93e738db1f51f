/**
 * Moving a platform from Klutch's v1 claims to v2-native composites while a bound app cluster keeps working (issue
 * 19, deliverable 4): the sandbox (sandbox/sandbox.ts) on Crossplane v2 core with the default package — a
 * PostgresqlInstance and a ServiceBinding made in the app cluster, Ready, `<binding>-creds` in the app cluster — is
 * switched to the `--crossplane v2` package by the steps the README gives (docs/crossplane.md "Moving to the v2 package"). The
 * claims upstream become the v2 composites (same objects: the claim CRD becomes the composite CRD), the a8s objects
 * are adopted by the new namespaced Objects, and the creds Secret by the new Object. Watches count every create and
 * delete of the a8s objects and of the app cluster's objects during the switch: none may be deleted.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { watchInformer, type WatchInformer } from '../../controller';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox';
import { Steps } from '../../sandbox/steps';
import { render } from '../../synth/synth';
import { loadCatalog, parseYaml } from '../support/catalog';
import { controlPlanes } from '../support/cluster';
import { eventually, getObject, kubeFromConfig, requireOk, type Kube } from '../support/kube';
import { ensureCrossplane } from '../tools/crossplane';
import { ensureProviderKubernetes } from '../tools/provider-kubernetes';

type Obj = Record<string, any>;

const NS = 'default';
const BACKUP = 'demo-backup';
let dir: string;
let output = '';
let sandbox: Sandbox;
let app: Kube;
let control: Kube;
let failed = false;

/** What a watch saw during the switch. */
interface Counted {
  readonly what: string;
  readonly informer: WatchInformer<KubernetesObject>;
  readonly created: string[];
  readonly deleted: string[];
}
const counted: Counted[] = [];

async function count(kube: Kube, what: string, path: string): Promise<Counted> {
  const informer = watchInformer<KubernetesObject>({ kc: kube.config, path });
  const c: Counted = { what, informer, created: [], deleted: [] };
  informer.on('add', (o) => informer.hasSynced() && c.created.push(`${o.metadata?.namespace}/${o.metadata?.name}`));
  informer.on('delete', (o) => c.deleted.push(`${o.metadata?.namespace}/${o.metadata?.name}`));
  await informer.start();
  await informer.synced;
  counted.push(c);
  return c;
}

/** The state a user sees before the switch, to compare after it. */
const before: Record<string, Obj> = {};

beforeAll(async () => {
  await controlPlanes();
  await ensureCrossplane(undefined, 'v2');
  await ensureProviderKubernetes();
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-migration-'));
  try {
    sandbox = await startSandbox({ dir, steps: new Steps((t) => (output += t)) });
  } catch (e) {
    (e as Error).message += `\nsandbox output:\n${output}`;
    throw e;
  }
  app = kubeFromConfig(readFileSync(sandbox.kubeconfigs.app, 'utf8'));
  control = kubeFromConfig(readFileSync(sandbox.kubeconfigs.controlPlane, 'utf8'));
  // A Backup of the sandbox's PostgreSQL too, made in the app cluster as Klutch's example writes it.
  await sandbox.bind('backups');
  const backup = parseYaml(sandbox.files.get('packages/dataservices/examples/backup-a8s.yaml')!)[0] as Obj;
  backup.metadata.name = BACKUP;
  backup.spec.instanceRef = sandbox.claims.instance;
  await eventually(
    `Backup ${BACKUP} to be created in the app cluster`,
    async () => {
      const r = await app.request('POST', `/apis/anynines.com/v1/namespaces/${NS}/backups`, backup);
      if (r.code >= 300 && ![404, 429, 503].includes(r.code))
        throw new Error(`cannot create Backup ${BACKUP}: ${r.code} ${JSON.stringify(r.body.message)}`);
      return r.code < 300 ? true : undefined;
    },
    60_000,
  );
}, 45 * 60_000);

afterAll(async () => {
  await Promise.all(counted.map((c) => c.informer.stop()));
  await sandbox?.stop();
  if (dir && !failed) rmSync(dir, { recursive: true, force: true });
  else if (dir) writeFileSync(join(dir, 'sandbox-output.txt'), output);
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(({ task }) => {
    failed = true;
    for (const e of task.result?.errors ?? []) e.message = `${e.message}\n(logs in ${dir}; sandbox output:\n${output})`;
  });
});

const instancePath = (ns: string) => `/apis/anynines.com/v1/namespaces/${ns}/postgresqlinstances/${sandbox.claims.instance}`;
const bindingPath = (ns: string) => `/apis/anynines.com/v1/namespaces/${ns}/servicebindings/${sandbox.claims.binding}`;
const backupPath = (ns: string) => `/apis/anynines.com/v1/namespaces/${ns}/backups/${BACKUP}`;
const a8sBackupPath = (ns: string) => `/apis/backups.anynines.com/v1beta3/namespaces/${ns}/backups/${BACKUP}`;
const credsPath = (ns: string) => `/api/v1/namespaces/${ns}/secrets/${sandbox.claims.binding}-creds`;
const ready = (o: Obj | undefined) => (o?.status?.conditions as Obj[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True');

/** The fields Crossplane adds to a claim's spec (xcrd CompositeResourceClaimSpecProps), but for compositionRef. */
const CLAIM_MACHINERY = [
  'compositeDeletePolicy',
  'compositionRevisionRef',
  'compositionRevisionSelector',
  'compositionSelector',
  'compositionUpdatePolicy',
  'resourceRef',
  'writeConnectionSecretToRef',
];
const withoutClaimMachinery = (spec: Obj): Obj => Object.fromEntries(Object.entries(spec).filter(([k]) => !CLAIM_MACHINERY.includes(k)));

/** A merge patch that must succeed. */
const patch = (kube: Kube, path: string, body: Obj) => requireOk(kube, 'PATCH', path, body, 'application/merge-patch+json');

async function list(kube: Kube, path: string): Promise<Obj[]> {
  return ((await getObject(kube, path))?.items as Obj[] | undefined) ?? [];
}

/**
 * The steps of "Moving to the v2 package" (docs/crossplane.md), done through the API as the kubectl commands there do. Crossplane
 * is stopped meanwhile, so that it neither deletes the claims of the XRDs that go nor re-creates what is removed.
 */
async function migrate(): Promise<void> {
  const xp = sandbox.crossplane;
  const v2 = render({ apis: await loadCatalog(), outdir: 'unused', target: 'v2' });
  // 1. Stop Crossplane.
  await xp.stopCore();
  // 2. Keep the data: the legacy Objects orphan their a8s objects when they go, and the connection Secrets they
  //    wrote (<claim>-creds) no longer belong to them, so the new Objects adopt them.
  for (const o of await list(control, '/apis/kubernetes.crossplane.io/v1alpha2/objects')) {
    await patch(control, `/apis/kubernetes.crossplane.io/v1alpha2/objects/${o.metadata.name}`, { spec: { deletionPolicy: 'Orphan' } });
  }
  for (const s of await list(control, '/api/v1/secrets')) {
    const refs = (s.metadata.ownerReferences ?? []) as Obj[];
    if (!refs.some((r) => r.kind === 'Object' && String(r.apiVersion).startsWith('kubernetes.crossplane.io/'))) continue;
    await patch(control, `/api/v1/namespaces/${s.metadata.namespace}/secrets/${s.metadata.name}`, { metadata: { ownerReferences: null } });
  }
  // 3. Per v1 XRD: its claims keep living (the claim CRD is released from the XRD, their Crossplane finalizer goes);
  //    its composites go (finalizers off; with them the legacy Objects, which orphan); then the XRD itself.
  const xrds = (await list(control, '/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions')).filter((x) => x.spec.claimNames);
  for (const xrd of xrds) {
    const group = xrd.spec.group as string;
    const version = (xrd.spec.versions as Obj[]).find((v) => v.referenceable)?.name as string;
    for (const c of await list(control, `/apis/${group}/${version}/${xrd.spec.claimNames.plural}`)) {
      const rest = ((c.metadata.finalizers ?? []) as string[]).filter((f) => f !== 'finalizer.apiextensions.crossplane.io');
      await patch(
        control,
        `/apis/${group}/${version}/namespaces/${c.metadata.namespace}/${xrd.spec.claimNames.plural}/${c.metadata.name}`,
        {
          metadata: { finalizers: rest },
        },
      );
    }
    for (const x of await list(control, `/apis/${group}/${version}/${xrd.spec.names.plural}`)) {
      await patch(control, `/apis/${group}/${version}/${xrd.spec.names.plural}/${x.metadata.name}`, { metadata: { finalizers: null } });
    }
    await patch(control, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${xrd.spec.claimNames.plural}.${group}`, {
      metadata: { ownerReferences: null },
    });
    await patch(control, `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/${xrd.metadata.name}`, {
      metadata: { finalizers: null },
    });
    await requireOk(control, 'DELETE', `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/${xrd.metadata.name}`);
  }
  // 4. The old package revision stops establishing; the Configuration names the v2 package.
  for (const r of await list(control, '/apis/pkg.crossplane.io/v1/configurationrevisions')) {
    await patch(control, `/apis/pkg.crossplane.io/v1/configurationrevisions/${r.metadata.name}`, { spec: { desiredState: 'Inactive' } });
  }
  await xp.switchConfiguration(v2, { wait: false });
  // 5. Wait until the garbage collector took the composite CRDs (and the composites, and the legacy Objects).
  await eventually(
    'the composite CRDs and legacy Objects of the v1 package to be gone',
    async () => {
      for (const xrd of xrds) {
        if (await getObject(control, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${xrd.metadata.name}`)) return undefined;
      }
      return (await list(control, '/apis/kubernetes.crossplane.io/v1alpha2/objects')).length === 0 ? true : undefined;
    },
    120_000,
  );
  // 6. Start Crossplane: the v2 XRDs take over the claim CRDs, and the claims are composed as v2 composites.
  await xp.startCore();
  await xp.switchConfiguration(v2);
}

describe('moving the platform from v1 claims to the v2 package, with the app cluster bound', () => {
  it('before: the claims are Klutch claims on the control plane, Ready in the app cluster, with their creds', async () => {
    const ns = sandbox.claims.providerNamespace;
    const claim = await requireOk(control, 'GET', instancePath(ns));
    expect(claim.spec.resourceRef?.kind).toBe('XPostgresqlInstance');
    before.instance = await requireOk(app, 'GET', instancePath(NS));
    before.binding = await requireOk(app, 'GET', bindingPath(NS));
    before.creds = await requireOk(app, 'GET', credsPath(NS));
    expect(ready(before.instance)).toBe(true);
    before.postgresql = await requireOk(
      control,
      'GET',
      `/apis/postgresql.anynines.com/v1beta3/namespaces/${ns}/postgresqls/${sandbox.claims.instance}`,
    );
    before.backup = await requireOk(app, 'GET', backupPath(NS));
    before.a8sBackup = await eventually('the a8s Backup on the control plane', () => getObject(control, a8sBackupPath(ns)), 90_000);
    before.a8sBinding = await requireOk(
      control,
      'GET',
      `/apis/servicebindings.anynines.com/v1beta3/namespaces/${ns}/servicebindings/${sandbox.claims.binding}`,
    );
  });

  it('switches with zero deletes: no a8s object, app claim or creds Secret is deleted or created again', async () => {
    const a8s = [
      await count(control, 'a8s Postgresql', '/apis/postgresql.anynines.com/v1beta3/postgresqls'),
      await count(control, 'a8s ServiceBinding', '/apis/servicebindings.anynines.com/v1beta3/servicebindings'),
      await count(control, 'a8s Backup', '/apis/backups.anynines.com/v1beta3/backups'),
    ];
    const appSide = [
      await count(app, 'app PostgresqlInstance', '/apis/anynines.com/v1/postgresqlinstances'),
      await count(app, 'app ServiceBinding', '/apis/anynines.com/v1/servicebindings'),
      await count(app, 'app Backup', '/apis/anynines.com/v1/backups'),
      await count(app, 'app Secret', `/api/v1/namespaces/${NS}/secrets`),
    ];
    await migrate();
    const ns = sandbox.claims.providerNamespace;
    // The claims upstream are v2 composites now, composed into namespaced Objects by the selection Composition.
    const xr = await eventually(
      'the PostgresqlInstance upstream to be a v2 composite, composed and Ready',
      async () => {
        const o = await getObject(control, instancePath(ns));
        return o?.spec?.crossplane?.resourceRefs?.length && ready(o) ? o : undefined;
      },
      180_000,
    );
    expect(xr.metadata.uid).toBeDefined();
    expect(xr.spec.crossplane.compositionRef).toEqual({ name: 'postgresql' });
    expect(xr.spec.crossplane.resourceRefs.map((r: Obj) => r.apiVersion)).toEqual(['kubernetes.m.crossplane.io/v1alpha1']);
    for (const [what, p] of [
      ['ServiceBinding', bindingPath(ns)],
      ['Backup', backupPath(ns)],
    ] as const) {
      await eventually(
        `the ${what} upstream to be a composed v2 composite`,
        async () => ((await getObject(control, p))?.spec?.crossplane?.resourceRefs?.length ? true : undefined),
        120_000,
      );
    }
    // The app cluster's status is the v2 composite's: its Ready condition, set after the switch, comes down (compared
    // with the composite's current one: the provider's polls may move it meanwhile).
    const readyOf = (o: Obj | undefined) => (o?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Ready');
    await eventually(
      'the PostgresqlInstance Ready in the app cluster with the v2 composite Ready condition',
      async () => {
        const down = readyOf(await getObject(app, instancePath(NS)));
        const up = readyOf(await getObject(control, instancePath(ns)));
        return down?.status === 'True' && up?.status === 'True' && down.lastTransitionTime === up.lastTransitionTime ? true : undefined;
      },
      180_000,
    );
    const events = [...a8s, ...appSide].map((c) => ({ what: c.what, created: c.created, deleted: c.deleted }));
    expect(events).toEqual([...a8s, ...appSide].map((c) => ({ what: c.what, created: [], deleted: [] })));
  }, 600_000);

  it('after: the app cluster keeps names, specs and the creds Secret; the a8s objects are the same objects', async () => {
    const ns = sandbox.claims.providerNamespace;
    const instance = await requireOk(app, 'GET', instancePath(NS));
    const binding = await requireOk(app, 'GET', bindingPath(NS));
    const creds = await requireOk(app, 'GET', credsPath(NS));
    expect(instance.metadata.uid).toBe(before.instance!.metadata.uid);
    // What the app developer wrote stays; only Crossplane's claim machinery, which the v1 claim CRD defaulted
    // (compositeDeletePolicy), is not part of the API any more.
    expect(instance.spec).toEqual(withoutClaimMachinery(before.instance!.spec));
    expect(binding.metadata.uid).toBe(before.binding!.metadata.uid);
    expect(binding.spec).toEqual(withoutClaimMachinery(before.binding!.spec));
    expect(creds.metadata.uid).toBe(before.creds!.metadata.uid);
    expect(creds.data).toEqual(before.creds!.data);
    const pg = await requireOk(
      control,
      'GET',
      `/apis/postgresql.anynines.com/v1beta3/namespaces/${ns}/postgresqls/${sandbox.claims.instance}`,
    );
    expect(pg.metadata.uid).toBe(before.postgresql!.metadata.uid);
    const backup = await requireOk(app, 'GET', backupPath(NS));
    expect(backup.metadata.uid).toBe(before.backup!.metadata.uid);
    expect(backup.spec).toEqual(withoutClaimMachinery(before.backup!.spec));
    expect((await requireOk(control, 'GET', a8sBackupPath(ns))).metadata.uid).toBe(before.a8sBackup!.metadata.uid);
    const sb = await requireOk(
      control,
      'GET',
      `/apis/servicebindings.anynines.com/v1beta3/namespaces/${ns}/servicebindings/${sandbox.claims.binding}`,
    );
    expect(sb.metadata.uid).toBe(before.a8sBinding!.metadata.uid);
    // The creds Secret upstream now belongs to the new namespaced Object.
    // The adoption is written by Crossplane as it composes: on a loaded machine it may come after the rest.
    const up = await eventually('the creds Secret upstream owned by the namespaced Object', async () => {
      const o = await getObject(control, credsPath(ns));
      return (o?.metadata.ownerReferences as Obj[] | undefined)?.length ? o : undefined;
    });
    expect((up.metadata.ownerReferences as Obj[]).map((r) => [r.apiVersion, r.kind])).toEqual([
      ['kubernetes.m.crossplane.io/v1alpha1', 'Object'],
    ]);
  });
});
