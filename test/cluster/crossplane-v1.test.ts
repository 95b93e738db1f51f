/**
 * The smallest suite that still proves the default (`v1`, Klutch-compatible) package on Crossplane core v1.20.11, the
 * last 1.x line: Crossplane's package manager installs it behind v1.20's own XRD webhook, and one a8s claim goes
 * claim → composite → Object → a8s PostgreSQL → Ready → deleted (the PostgreSQL with it). Everything else runs on v2 core as operators run it,
 * on the shared Pod platform (crossplane-claims.test.ts, crossplane-v2-native.test.ts). A cluster of its own
 * (Crossplane installs cluster-wide CRDs and webhooks), with Crossplane, the function and provider-kubernetes as
 * processes (harness/crossplane/crossplane.ts): this suite is also where that harness shows a failing step and its stop().
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONVERSION_TABLE_FILE, PACKAGE_DIR, render } from '../../synth/synth';
import { KEPT_ANNOTATION } from '../../lib/conversion';
import { startConversionProcess } from '../../harness/parts/conversion-server';
import { V1_DEPRECATION, VERSIONED_GROUP, versionedBackup } from '../support/versioned-api';
import { loadCatalog, parseYaml, ROOT } from '../../harness/crossplane/catalog';
import { controlPlanes } from '../support/cluster';
import { type ControlPlanes, startControlPlanes } from '../../harness/cluster/control-plane';
import {
  CONFIGURATION_NAME,
  type Crossplane,
  crossplanePki,
  startCrossplane,
  startCrossplaneCore,
} from '../../harness/crossplane/crossplane';
import { apply, condition, established, getIfExists, requireOk } from '../../harness/cluster/kube';
import { applyConstruct } from '../../harness/parts/konnector';
import { ConsumerClaimMachinery, CONSUMER_CLAIM_MACHINERY_POLICY } from '../../backend/deploy/consumer-claim-machinery';
import { BINDER } from '../../backend/provision/rbac';
import { eventually, type Kube, kubeFor } from '../../harness/cluster/kube';
import { isAlive, runCommand } from '../../harness/cluster/processes';
import { A8sOperatorsStandIn } from '../../harness/stand-ins/a8s-operators';
import { crossplaneBinaryPath } from '../../harness/tools/crossplane';
import { kubeBinaryPath } from '../../harness/tools/kube';

type Obj = Record<string, any>;

const CLUSTER = 'crossplane-v1';
const CLAIM = '/apis/anynines.com/v1/namespaces/default/postgresqlinstances/example-postgresql-a8s';
const POSTGRESQL = '/apis/postgresql.anynines.com/v1beta3/namespaces/default/postgresqls/example-postgresql-a8s';
let cp: ControlPlanes;
let xp: Crossplane;
let kube: Kube;
let a8s: A8sOperatorsStandIn;
let claim: Obj;

beforeAll(async () => {
  await controlPlanes(); // the shared clusters are up, so the Kubernetes binary is built
  cp = await startControlPlanes({ clusters: [CLUSTER], binary: kubeBinaryPath() });
  kube = kubeFor(cp.clusters[CLUSTER]!);
  a8s = new A8sOperatorsStandIn(kube);
  const files = render({ apis: await loadCatalog(), outdir: 'unused' });
  [xp] = await Promise.all([startCrossplane(cp.clusters[CLUSTER]!, { files, version: 'v1' }), a8s.installCrds()]);
  claim = [...xp.files.entries()]
    .filter(([p]) => p.includes('/examples/'))
    .map(([, text]) => parseYaml(text)[0] as Obj)
    .find((d) => d.metadata.name === 'example-postgresql-a8s')!;
}, 45 * 60_000);

afterAll(async () => {
  await xp?.stop();
  await cp?.stop();
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(({ task }) => {
    for (const e of task.result?.errors ?? []) e.message = `${e.message}\n(Crossplane, function and provider logs: ${xp?.runDir})`;
  });
});

describe('Crossplane v1.20 core', () => {
  it('installs our Function (its input CRD owned by the revision) and Configuration through its package manager', async () => {
    expect(xp.release).toBe('v1.20.11');
    const fn = await getIfExists(kube, `/apis/pkg.crossplane.io/v1/functions/${xp.functionName}`);
    expect([condition(fn, 'Installed'), condition(fn, 'Healthy')]).toEqual(['True', 'True']);
    const input = await getIfExists(
      kube,
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/inputs.dataservices.fn.klutch.anynines.com',
    );
    expect(input?.metadata.ownerReferences?.map((o: Obj) => o.kind)).toContain('FunctionRevision');
    const conf = await getIfExists(kube, `/apis/pkg.crossplane.io/v1/configurations/${CONFIGURATION_NAME}`);
    expect([condition(conf, 'Installed'), condition(conf, 'Healthy')]).toEqual(['True', 'True']);
    const xrds = (await getIfExists(kube, '/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions'))!.items as Obj[];
    expect(xrds.filter((x) => condition(x, 'Established') === 'True' && condition(x, 'Offered') === 'True').length).toBe(11);
  });

  it('behind its own admission webhooks, on loopback: an XRD whose CRD would be invalid is refused (v2 serves none)', async () => {
    const xrd = {
      apiVersion: 'apiextensions.crossplane.io/v1',
      kind: 'CompositeResourceDefinition',
      metadata: { name: 'xwidgets.broken.klutch-kit.io' },
      spec: {
        group: 'broken.klutch-kit.io',
        names: { kind: 'XWidget', plural: 'xwidgets' },
        versions: [
          {
            name: 'v1',
            served: true,
            referenceable: true,
            schema: {
              openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'size' } } } } },
            },
          },
        ],
      },
    };
    const r = await kube.request('POST', '/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions?dryRun=All', xrd);
    expect(String(r.body.message)).toMatch(
      /admission webhook "compositeresourcedefinitions\.apiextensions\.crossplane\.io" denied the request: invalid CRD generated for CompositeResourceDefinition/,
    );
  });

  it('an a8s claim: composite, Object, a8s PostgreSQL, Ready once the operator reports it running; deleted, it deletes the PostgreSQL', async () => {
    await apply(kube, claim);
    const composite = await eventually('the claim to be bound to its composite', async () => {
      const ref = (await getIfExists(kube, CLAIM))?.spec?.resourceRef;
      return ref ? `/apis/anynines.com/v1/xpostgresqlinstances/${ref.name}` : undefined;
    });
    const object = await eventually('the composite to compose an Object', async () => {
      const ref = ((await getIfExists(kube, composite))?.spec?.resourceRefs as Obj[] | undefined)?.[0];
      return ref?.name ? `/apis/kubernetes.crossplane.io/v1alpha2/objects/${ref.name}` : undefined;
    });
    await eventually('provider-kubernetes to create the a8s PostgreSQL', async () =>
      (await getIfExists(kube, POSTGRESQL)) ? true : undefined,
    );
    expect(condition(await getIfExists(kube, CLAIM), 'Ready')).not.toBe('True');
    await a8s.postgresqlRunning('default', 'example-postgresql-a8s');
    // provider-kubernetes re-reads an Object that is not Ready every 30 s (hard-coded).
    await eventually(
      'the claim to be Ready',
      async () => (condition(await getIfExists(kube, CLAIM), 'Ready') === 'True' ? true : undefined),
      45_000,
    );

    expect((await kube.request('DELETE', CLAIM)).code).toBeLessThan(300);
    // The a8s PostgreSQL goes, and the composite and Object are being deleted. Their finalizers go about 30 s after
    // the PostgreSQL (provider-kubernetes re-reads a deleting Object on its 30 s poll, measured here 28 s), as on v2:
    // crossplane-claims.test.ts waits that out for every claim; this smoke does not wait for it twice.
    await eventually(
      'the a8s PostgreSQL to be gone, the composite and its Object being deleted',
      async () => {
        const [c, o, pg] = await Promise.all([composite, object, POSTGRESQL].map((p) => getIfExists(kube, p)));
        return !pg && (!c || c.metadata.deletionTimestamp) && (!o || o.metadata.deletionTimestamp) ? true : undefined;
      },
      60_000,
    );
  }, 120_000);
});

describe("issue 34: a consumer cannot write Crossplane's fields of a claim", () => {
  const ns = 'tenant-machinery';
  const claims = `/apis/anynines.com/v1/namespaces/${ns}/postgresqlinstances`;
  const xrs = '/apis/anynines.com/v1/xpostgresqlinstances';
  /** A namespaced test API in an exported group, in the shape of a Crossplane v2 composite (`spec.crossplane`). */
  const gadgets = `/apis/anynines.com/v1/namespaces/${ns}/machinerygadgets`;
  const refusal = `ValidatingAdmissionPolicy '${CONSUMER_CLAIM_MACHINERY_POLICY}' with binding '${CONSUMER_CLAIM_MACHINERY_POLICY}' denied request`;
  const spec = () => ({ ...claim.spec, compositionRef: { name: 'a8s-postgresql' } });
  /** A composite an operator provisioned statically, which no claim holds. */
  const platformDb = (name: string) => ({
    apiVersion: 'anynines.com/v1',
    kind: 'XPostgresqlInstance',
    metadata: { name },
    spec: spec(),
  });

  it('binds no claim to a composite it names, picks no Composition by labels, pins no revision; its own claims work', async () => {
    await applyConstruct(kube, (c) => new ConsumerClaimMachinery(c, 'machinery', { exportedGroups: ['anynines.com'] }));
    await apply(kube, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await apply(kube, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: BINDER, namespace: ns } });
    await apply(kube, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'claims', namespace: ns },
      rules: [{ apiGroups: ['anynines.com'], resources: ['postgresqlinstances', 'machinerygadgets'], verbs: ['*'] }],
    });
    await apply(kube, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'claims', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'claims' },
      subjects: [{ kind: 'ServiceAccount', name: BINDER, namespace: ns }],
    });
    await apply(kube, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'machinerygadgets.anynines.com' },
      spec: {
        group: 'anynines.com',
        scope: 'Namespaced',
        names: { kind: 'MachineryGadget', plural: 'machinerygadgets', singular: 'machinerygadget', listKind: 'MachineryGadgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    await established(kube, 'machinerygadgets.anynines.com');
    await Promise.all(['platform-db', 'platform-db-2'].map((n) => apply(kube, platformDb(n))));
    const token = (
      await requireOk(kube, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts/${BINDER}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      })
    ).status as { token: string };
    const consumer = kubeFor(cp.clusters[CLUSTER]!, 'token', token.token);
    const post = (name: string, extra: Obj) =>
      consumer.request('POST', claims, {
        apiVersion: 'anynines.com/v1',
        kind: 'PostgresqlInstance',
        metadata: { name, namespace: ns },
        spec: { ...spec(), ...extra },
      });
    const refused = (r: { code: number; body: Obj }, ...fields: string[]) => {
      expect(r.code, JSON.stringify(r.body)).toBe(403);
      expect(String(r.body.message)).toContain(refusal);
      for (const f of fields) expect(String(r.body.message)).toContain(f);
    };

    // The API server enforces a new policy once its informers have it: the first attack waits for that, as a dry run.
    const steal = { resourceRef: { apiVersion: 'anynines.com/v1', kind: 'XPostgresqlInstance', name: 'platform-db' } };
    const dryRun = () =>
      consumer.request('POST', `${claims}?dryRun=All`, {
        apiVersion: 'anynines.com/v1',
        kind: 'PostgresqlInstance',
        metadata: { name: 'steal', namespace: ns },
        spec: { ...spec(), ...steal },
      });
    await eventually('the policy in force', async () => ((await dryRun()).code === 403 ? true : undefined));
    // The attacks: another's composite by name, a Composition by its labels past the API's rules, a pinned revision.
    refused(
      await post('steal', { resourceRef: { apiVersion: 'anynines.com/v1', kind: 'XPostgresqlInstance', name: 'platform-db' } }),
      'spec.resourceRef',
    );
    refused(
      await post('pick', { compositionRef: undefined, compositionSelector: { matchLabels: { 'klutch.anynines.com/backend': 'cnpg' } } }),
      'spec.compositionSelector',
    );
    refused(
      await post('pin', { compositionUpdatePolicy: 'Manual', compositionRevisionRef: { name: 'a8s-postgresql-0000000' } }),
      'spec.compositionUpdatePolicy',
      'spec.compositionRevisionRef',
    );
    // Its own claim: created, bound by Crossplane, changed by the consumer as a konnector does; Crossplane's refs stay.
    expect((await post('own', { compositionUpdatePolicy: 'Automatic' })).code).toBe(201);
    const bound = await eventually(
      "Crossplane to bind the consumer's claim",
      async () => (await getIfExists(kube, `${claims}/own`))?.spec?.resourceRef?.name,
    );
    const merge = (body: Obj) => consumer.request('PATCH', `${claims}/own`, body, 'application/merge-patch+json');
    expect((await merge({ metadata: { labels: { team: 'm' } }, spec: { plan: claim.spec.plan } })).code).toBe(200);
    refused(await merge({ spec: { resourceRef: { name: 'platform-db' } } }), 'spec.resourceRef');
    refused(
      await merge({ spec: { compositionSelector: { matchLabels: { 'klutch.anynines.com/backend': 'cnpg' } } } }),
      'spec.compositionSelector',
    );
    expect((await getIfExists(kube, `${claims}/own`))?.spec?.resourceRef?.name).toBe(bound);
    // The same fields under spec.crossplane (a namespaced Crossplane v2 composite): compositionRef only.
    const gadget = (name: string, crossplane: Obj) =>
      consumer.request('POST', gadgets, {
        apiVersion: 'anynines.com/v1',
        kind: 'MachineryGadget',
        metadata: { name, namespace: ns },
        spec: { crossplane },
      });
    refused(await gadget('g1', { compositionSelector: { matchLabels: { a: 'b' } } }), 'spec.crossplane.compositionSelector');
    refused(await gadget('g2', { resourceRefs: [{ apiVersion: 'v1', kind: 'Secret', name: 'x' }] }), 'spec.crossplane.resourceRefs');
    expect((await gadget('g3', { compositionRef: { name: 'cnpg-postgresql' } })).code).toBe(201);
    await requireOk(
      kube,
      'PATCH',
      `${gadgets}/g3`,
      { spec: { crossplane: { resourceRefs: [{ apiVersion: 'v1', kind: 'Secret', name: 'x' }] } } },
      'application/merge-patch+json',
    );
    expect(
      (
        await consumer.request(
          'PATCH',
          `${gadgets}/g3`,
          { spec: { crossplane: { compositionRef: { name: 'a8s-postgresql' } } } },
          'application/merge-patch+json',
        )
      ).code,
    ).toBe(200);
    refused(
      await consumer.request('PATCH', `${gadgets}/g3`, { spec: { crossplane: { resourceRefs: [] } } }, 'application/merge-patch+json'),
      'spec.crossplane.resourceRefs',
    );

    // An operator still binds a claim to a composite it made (what the consumer could have done without the policy).
    await apply(kube, {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'adopted', namespace: ns },
      spec: { ...spec(), resourceRef: { apiVersion: 'anynines.com/v1', kind: 'XPostgresqlInstance', name: 'platform-db-2' } },
    });
    await eventually("Crossplane to bind the operator's claim to platform-db-2", async () =>
      (await getIfExists(kube, `${xrs}/platform-db-2`))?.spec?.claimRef?.name === 'adopted' ? true : undefined,
    );
    expect((await getIfExists(kube, `${xrs}/platform-db`))?.spec?.claimRef).toBeUndefined();

    for (const path of [
      `${claims}/own`,
      `${claims}/adopted`,
      `${xrs}/platform-db`,
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/machinerygadgets.anynines.com',
    ])
      await kube.request('DELETE', path);
  }, 120_000);
});

describe('an API with a second version (issue 36): converted by the conversion server, composed by Crossplane', () => {
  it('takes a claim written in v1, stores and composes it as v2, reads it back as written, and refuses a smuggled value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-conversion-'));
    // The table and the XRD come from synth; the server's URL and CA only exist once it runs, so it starts on a table
    // rendered first (the table does not name the server).
    const table = render({
      apis: [versionedBackup({ deprecated: true })],
      outdir: 'unused',
      conversion: { url: 'https://x', caBundle: 'x' },
    });
    const server = await startConversionProcess({ table: table.get(CONVERSION_TABLE_FILE)!, dir });
    const claims = `/apis/${VERSIONED_GROUP}/%s/namespaces/default/backups`;
    try {
      const files = render({
        apis: [versionedBackup({ deprecated: true })],
        outdir: 'unused',
        conversion: { url: server.url, caBundle: server.ca },
      });
      for (const f of ['definition.yaml', 'composition-a8s.yaml'])
        await apply(kube, parseYaml(files.get(`${PACKAGE_DIR}/apis/vbackup/${f}`)!)[0] as Obj);
      await eventually('the XRD to be Established and Offered', async () => {
        const xrd = await getIfExists(
          kube,
          `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xbackups.${VERSIONED_GROUP}`,
        );
        return condition(xrd, 'Established') === 'True' && condition(xrd, 'Offered') === 'True' ? true : undefined;
      });
      // Crossplane gave both CRDs the XRD's webhook.
      for (const crd of [`xbackups.${VERSIONED_GROUP}`, `backups.${VERSIONED_GROUP}`])
        expect((await getIfExists(kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`))?.spec.conversion.strategy).toBe(
          'Webhook',
        );

      const v1 = {
        apiVersion: `${VERSIONED_GROUP}/v1`,
        kind: 'Backup',
        metadata: { name: 'nightly', namespace: 'default' },
        spec: { instance: 'example-postgresql-a8s', serviceInstanceType: 'postgresql', note: 'before the migration' },
      };
      const created = await kube.request('POST', claims.replace('%s', 'v1'), v1);
      expect(created.code, JSON.stringify(created.body)).toBe(201);
      expect(created.warnings ?? []).toContain(V1_DEPRECATION);
      const asV2 = (await getIfExists(kube, `${claims.replace('%s', 'v2')}/nightly`))!;
      expect(asV2.spec).toMatchObject({ instanceRef: 'example-postgresql-a8s', serviceInstanceType: 'postgresql', retention: '7d' });
      expect(asV2.spec.note).toBeUndefined();
      expect((await getIfExists(kube, `${claims.replace('%s', 'v1')}/nightly`))!.spec).toMatchObject(v1.spec);

      // Crossplane reads the claim in v2 (referenceable) and the function composes from v2's field.
      const backup = await eventually('the a8s Backup composed from the claim', async () => {
        const list = await getIfExists(kube, '/apis/backups.anynines.com/v1beta3/namespaces/default/backups');
        return (list?.items as Obj[] | undefined)?.find((b) => b.spec?.serviceInstance?.name === 'example-postgresql-a8s');
      });
      expect(backup.spec.serviceInstance.name).toBe('example-postgresql-a8s');

      // The kept annotation is the claim author's: a value v2 refuses cannot reach etcd through it.
      const smuggled = {
        ...v1,
        metadata: { name: 'smuggled', namespace: 'default', annotations: { [KEPT_ANNOTATION]: '{"spec.retention":"forever"}' } },
      };
      const refused = await kube.request('POST', claims.replace('%s', 'v1'), smuggled);
      expect(refused.code).toBeGreaterThanOrEqual(400);
      expect(String(refused.body.message)).toMatch(/Backup default\/smuggled: spec\.retention must match pattern/);

      expect((await kube.request('DELETE', `${claims.replace('%s', 'v1')}/nightly`)).code).toBeLessThan(300);
      await eventually(
        'the claim to be gone',
        async () => ((await getIfExists(kube, `${claims.replace('%s', 'v2')}/nightly`)) ? undefined : true),
        60_000,
      );
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('retiring a version (issue 36 item 5): the documented kubectl steps, then the XRD without it', () => {
  it('moves a claim stored in v1 to v2, so the XRD can drop v1 and the claim reads on in v2', async () => {
    const group = 'retire.klutch-kit.test';
    const crds = [`backups.${group}`, `xbackups.${group}`];
    const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-retire-'));
    const table = render({ apis: [versionedBackup({ group })], outdir: 'unused', conversion: { url: 'https://x', caBundle: 'x' } });
    const server = await startConversionProcess({ table: table.get(CONVERSION_TABLE_FILE)!, dir });
    const xrdOf = (served: 'v1' | 'both' | 'v2') =>
      parseYaml(
        render({ apis: [versionedBackup({ group, served })], outdir: 'unused', conversion: { url: server.url, caBundle: server.ca } }).get(
          `${PACKAGE_DIR}/apis/vbackup/definition.yaml`,
        )!,
      )[0] as Obj;
    const xrdPath = `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xbackups.${group}`;
    const crdOf = (name: string) => getIfExists(kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    const served = async (versions: string[]) => {
      const crd = await eventually(`the claim CRD listing ${versions.join(', ')}`, async () => {
        const crd = await crdOf(crds[0]!);
        return JSON.stringify((crd?.spec.versions as Obj[] | undefined)?.map((v) => v.name)) === JSON.stringify(versions) ? crd : undefined;
      });
      // Listed is not yet served: a claim written before then is a 404 (a CI run was lost to it).
      await established(kube, crds[0]!);
      return crd;
    };
    const claim = `/apis/${group}/%s/namespaces/default/backups/old`;
    try {
      // Before v2: the claim is written, and stored, in v1.
      await apply(kube, xrdOf('v1'));
      await served(['v1']);
      const v1 = {
        apiVersion: `${group}/v1`,
        kind: 'Backup',
        metadata: { name: 'old', namespace: 'default' },
        spec: { instance: 'pg', serviceInstanceType: 'postgresql' },
      };
      expect((await kube.request('POST', claim.replace('/old', '').replace('%s', 'v1'), v1)).code).toBe(201);
      // v2 comes, as the storage version: the CRD records that v1 may still be stored.
      await apply(kube, xrdOf('both'));
      const both = await served(['v1', 'v2']);
      expect([...both.status.storedVersions].sort()).toEqual(['v1', 'v2']);

      // The manual's steps (docs/conversion.md, "Retiring a version") as it prints them, run by bash with the real
      // kubectl, for this test's group. Crossplane writes the claim meanwhile: the steps must not conflict with it.
      const manual = readFileSync(join(ROOT, 'docs', 'conversion.md'), 'utf8');
      const script = /## Retiring a version[\s\S]*?```sh\n([\s\S]*?)```/.exec(manual)![1]!.replaceAll(VERSIONED_GROUP, group);
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      writeFileSync(join(bin, 'kubectl'), `#!/bin/sh\nexec ${kubeBinaryPath()} kubectl "$@"\n`, { mode: 0o755 });
      const steps = await runCommand('bash', ['-c', script], {
        timeoutMs: 120_000,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, KUBECONFIG: cp.clusters[CLUSTER]!.kubeconfig },
      });
      expect(steps.code, `the manual's steps: ${steps.output}`).toBe(0);
      for (const crd of crds) expect((await crdOf(crd))!.status.storedVersions).toEqual(['v2']);

      // v1 retired: Crossplane updates both CRDs (the API server would refuse it with v1 still stored), and the claim
      // reads on, converted once and for all.
      await apply(kube, xrdOf('v2'));
      await served(['v2']);
      expect((await getIfExists(kube, claim.replace('%s', 'v2')))!.spec).toMatchObject({ instanceRef: 'pg', retention: '7d' });
    } finally {
      await kube.request('DELETE', claim.replace('%s', 'v2')).catch(() => undefined);
      await kube.request('DELETE', xrdPath).catch(() => undefined);
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('the Crossplane processes of the harness', () => {
  it('a failing step names the process and its log file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-crossplane-fail-'));
    try {
      const pki = await crossplanePki(join(dir, 'pki'));
      rmSync(join(pki.crossplaneClient, 'tls.crt'));
      await expect(startCrossplaneCore(crossplaneBinaryPath('v1'), cp.clusters[CLUSTER]!, dir, pki)).rejects.toThrow(
        new RegExp(
          `crossplane of ${CLUSTER} exited \\(code 1\\) while waiting for Crossplane to serve /readyz and its webhook; ` +
            `its log is ${dir}/crossplane.log:[\\s\\S]*cannot load client TLS certificates`,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a killed test runner leaves no process behind: the parent-death guard every process of the setup has', async () => {
    // The function stands for the three: Crossplane, the function and the provider are started by the same guard.
    const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-crossplane-held-'));
    const runner = spawn(
      process.execPath,
      [
        join(ROOT, 'scripts', 'run-ts.mjs'),
        join(ROOT, 'test', 'cluster', 'fixtures', 'hold-crossplane-function.ts'),
        dir,
        cp.clusters[CLUSTER]!.kubeconfig,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const pids = await new Promise<number[]>((resolve, reject) => {
        let out = '';
        runner.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]!) as { pids: number[] }).pids);
        });
        runner.once('exit', (code, signal) => reject(new Error(`the runner exited (${code ?? signal}) before its function was ready`)));
      });
      expect(pids.length).toBe(1);
      expect(pids.every(isAlive)).toBe(true);
      runner.kill('SIGKILL');
      await eventually('the function to exit after its runner was killed', async () => (pids.some(isAlive) ? undefined : true), 30_000);
    } finally {
      runner.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stop() ends Crossplane, the function and the provider, keeping the logs and not the keys', async () => {
    const pids = [...xp.pids];
    expect(pids.length).toBe(3);
    expect(pids.every(isAlive)).toBe(true);
    await xp.stop();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(join(xp.runDir, 'crossplane.log')), 'logs are kept').toBe(true);
    expect(existsSync(join(xp.runDir, 'pki')), 'keys are not').toBe(false);
  });
});
