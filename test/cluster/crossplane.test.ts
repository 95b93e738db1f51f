/**
 * The real Crossplane control-plane loop (issues 12 and 19) on Crossplane core v2.2.1, the main target: our function
 * and provider-kubernetes v1.3.1 on a cluster of this suite's own (Crossplane installs cluster-wide CRDs and webhooks, so never on the shared
 * `a`/`b`), with our Function and Configuration installed by Crossplane's package manager from synth's `render()`
 * (what `npm run synth` writes). Every example claim is sent as a user would; Crossplane composes it through our function; provider-kubernetes
 * creates the a8s objects. What cannot run here is replaced by clearly named stand-ins that write only the status the
 * real thing would: the a8s operators (test/support/stand-ins/a8s-operators.ts) and provider-anynines with its a9s
 * service broker (test/support/stand-ins/a9s-service-broker.ts).
 *
 * The package is the default (`v1`, Klutch-compatible) one: on v2 its XRDs are LegacyCluster XRDs that offer Klutch's
 * claims. v1.20 core keeps a smaller suite of its own, crossplane-v1.test.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { render } from '../../synth/synth';
import { loadCatalog, parseYaml, ROOT } from '../support/catalog';
import { controlPlanes } from '../support/cluster';
import { type ControlPlanes, startControlPlanes } from '../support/control-plane';
import {
  apply,
  condition,
  CONFIGURATION_NAME,
  type Crossplane,
  crossplanePki,
  get,
  startCrossplane,
  startCrossplaneCore,
} from '../support/crossplane';
import { eventually, type Kube, kubeFor } from '../support/kube';
import { isAlive } from '../support/processes';
import { A8sOperatorsStandIn } from '../support/stand-ins/a8s-operators';
import { A9sServiceBrokerStandIn } from '../support/stand-ins/a9s-service-broker';
import { crossplaneBinaryPath, ensureCrossplane } from '../tools/crossplane';
import { ensureProviderKubernetes } from '../tools/provider-kubernetes';
import { kubeBinaryPath } from '../tools/kube';

type Obj = Record<string, any>;

/** What the a8s service-binding controller stand-in puts into the binding's Secret. */
const CREDENTIALS = {
  database: 'example',
  instance_service: 'example-postgresql-a8s-master.default',
  password: 's3cr3t',
  username: 'a8s-user',
};

const CLUSTER = 'crossplane';
let cp: ControlPlanes;
let xp: Crossplane;
let kube: Kube;
let a8s: A8sOperatorsStandIn;
let a9s: A9sServiceBrokerStandIn;
/** Claim kind → its plural and its composite's plural, from the synthesized XRDs. */
const plurals = new Map<string, { claim: string; composite: string }>();
/** Every example claim synth wrote, by name. */
const examples = new Map<string, Obj>();

/** Where provider resources live, by kind: provider-kubernetes' Object and provider-anynines' managed resources. */
const COMPOSED: Readonly<Record<string, string>> = {
  Object: '/apis/kubernetes.crossplane.io/v1alpha2/objects',
  ServiceInstance: '/apis/dataservices.anynines.com/v1/serviceinstances',
  ServiceBinding: '/apis/dataservices.anynines.com/v1/servicebindings',
  Backup: '/apis/dataservices.anynines.com/v1/backups',
  Restore: '/apis/dataservices.anynines.com/v1/restores',
};
/** The a8s objects inside Objects, by kind. */
const A8S: Readonly<Record<string, string>> = {
  Postgresql: 'postgresql.anynines.com/v1beta3/namespaces/%ns/postgresqls',
  ServiceBinding: 'servicebindings.anynines.com/v1beta3/namespaces/%ns/servicebindings',
  Backup: 'backups.anynines.com/v1beta3/namespaces/%ns/backups',
  Restore: 'backups.anynines.com/v1beta3/namespaces/%ns/restores',
};

/**
 * A test runner of its own (test/cluster/fixtures/hold-crossplane.ts) holding a second control plane with Crossplane,
 * for the test that kills it: started at once, so it comes up while this suite's own setup runs.
 */
let holder: ChildProcess | undefined;
let held: Promise<{ pids: number[] }> | undefined;

function holdCrossplane(): void {
  const runner = spawn(
    process.execPath,
    [join(ROOT, 'scripts', 'run-ts.mjs'), join(ROOT, 'test', 'cluster', 'fixtures', 'hold-crossplane.ts'), kubeBinaryPath()],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  holder = runner;
  held = new Promise((resolve, reject) => {
    let out = '';
    runner.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as { pids: number[] });
    });
    runner.once('exit', (code, signal) => reject(new Error(`the runner exited (${code ?? signal}) before its Crossplane was ready`)));
  });
  held.catch(() => undefined); // awaited by its test; a failed start must not be an unhandled rejection meanwhile
}

beforeAll(async () => {
  await controlPlanes(); // the shared clusters are up, so the Kubernetes binary is built
  await ensureCrossplane(undefined, 'v2');
  await ensureProviderKubernetes();
  holdCrossplane();
  cp = await startControlPlanes({ clusters: [CLUSTER], binary: kubeBinaryPath() });
  kube = kubeFor(cp.clusters[CLUSTER]!);
  a8s = new A8sOperatorsStandIn(kube);
  a9s = new A9sServiceBrokerStandIn(kube);
  const files = render({ apis: await loadCatalog(), outdir: 'unused' });
  [xp] = await Promise.all([startCrossplane(cp.clusters[CLUSTER]!, { files, version: 'v2' }), a8s.installCrds(), a9s.installCrds()]);
  for (const [path, text] of xp.files) {
    const doc = parseYaml(text)[0] as Obj;
    if (doc.kind === 'CompositeResourceDefinition' && doc.spec.claimNames) {
      plurals.set(doc.spec.claimNames.kind, { claim: doc.spec.claimNames.plural, composite: doc.spec.names.plural });
    }
    if (path.includes('/examples/')) examples.set(doc.metadata.name, doc);
  }
}, 45 * 60_000);

afterAll(async () => {
  holder?.kill('SIGKILL');
  await xp?.stop();
  await cp?.stop();
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(({ task }) => {
    for (const e of task.result?.errors ?? []) e.message = `${e.message}\n(Crossplane, function and provider logs: ${xp?.runDir})`;
  });
});

// ---------------------------------------------------------------------------------------------------------------------

function claimPath(claim: Obj): string {
  const p = plurals.get(claim.kind);
  if (!p) throw new Error(`no XRD offers claim kind ${claim.kind}`);
  return `/apis/${claim.apiVersion}/namespaces/${claim.metadata.namespace}/${p.claim}/${claim.metadata.name}`;
}

/** Claims the tests made beyond the examples: deleted with them. */
const extras: Obj[] = [];

/** A copy of an example claim under another name. */
function extraClaim(from: string, name: string): Obj {
  const claim = example(from);
  claim.metadata.name = name;
  extras.push(claim);
  return claim;
}

function hasReason(managed: Obj | undefined, reason: string): boolean {
  return (managed?.conditions as Obj[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True' && c.reason === reason) === true;
}

function example(name: string): Obj {
  const e = examples.get(name);
  if (!e) throw new Error(`synth wrote no example claim ${name}; it has ${[...examples.keys()].join(', ')}`);
  return structuredClone(e);
}

interface Composed {
  readonly claim: Obj;
  readonly composite: Obj;
  /** The composed resource: an Object (a8s) or a provider-anynines MR (a9s). */
  readonly resource: Obj;
  readonly resourcePath: string;
  /** For an Object: the a8s object it created. */
  readonly wrapped?: Obj;
  readonly wrappedPath?: string;
}

/** Waits until Crossplane composed the claim: its composite, the composed resource and (a8s) the object inside. */
async function composed(claim: Obj, timeoutMs = 30_000): Promise<Composed> {
  return eventually(
    `claim ${claim.kind} ${claim.metadata.name} to be composed`,
    async () => {
      const live = await get(kube, claimPath(claim));
      const ref = live?.spec?.resourceRef;
      if (!ref) return undefined;
      const composite = await get(kube, `/apis/${ref.apiVersion}/${plurals.get(claim.kind)!.composite}/${ref.name}`);
      const rref = (composite?.spec?.resourceRefs as Obj[] | undefined)?.[0];
      if (!rref?.name) return undefined;
      const resourcePath = `${COMPOSED[rref.kind]}/${rref.name}`;
      const resource = await get(kube, resourcePath);
      if (!resource) return undefined;
      if (rref.kind !== 'Object') return { claim: live!, composite: composite!, resource, resourcePath };
      const m = resource.spec.forProvider.manifest;
      // The cnpg backend's Cluster has no CRD on this control plane (test/cluster/cnpg.test.ts runs CloudNativePG):
      // its Object is as far as Crossplane composes here.
      if (!A8S[m.kind]) return { claim: live!, composite: composite!, resource, resourcePath };
      const wrappedPath = `/apis/${A8S[m.kind]!.replace('%ns', m.metadata.namespace)}/${m.metadata.name}`;
      const wrapped = await get(kube, wrappedPath);
      return wrapped ? { claim: live!, composite: composite!, resource, resourcePath, wrapped, wrappedPath } : undefined;
    },
    timeoutMs,
  );
}

/** Waits until the claim's conditions satisfy `ok`; the error shows the conditions last seen. */
async function claimState(claim: Obj, what: string, ok: (c: Obj) => boolean, timeoutMs = 20_000): Promise<Obj> {
  let seen: Obj | undefined;
  try {
    return await eventually(
      `claim ${claim.metadata.name}: ${what}`,
      async () => {
        seen = await get(kube, claimPath(claim));
        return seen && ok(seen) ? seen : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    (err as Error).message += `\nlast seen: status ${JSON.stringify(seen?.status ?? {})}`;
    throw err;
  }
}

function conditionOf(obj: Obj | undefined, type: string): Obj | undefined {
  return (obj?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);
}

// ---------------------------------------------------------------------------------------------------------------------

// First, so the second stack the killed runner held stops using the two cores early.
describe('a killed test runner', () => {
  it('leaves no process behind: control plane, Crossplane, function and provider all exit', async () => {
    const { pids } = await held!;
    expect(pids.length, 'etcd, kube-apiserver, kube-controller-manager, crossplane, function, provider-kubernetes').toBe(6);
    expect(pids.every(isAlive)).toBe(true);
    holder!.kill('SIGKILL');
    await eventually('every process to exit after the runner was killed', async () => (pids.some(isAlive) ? undefined : true), 30_000);
  });
});

describe('Crossplane installs our packages', () => {
  it('through its package manager: the Function (revision endpoint = the running function) and the Configuration', async () => {
    const fn = await get(kube, `/apis/pkg.crossplane.io/v1/functions/${xp.functionName}`);
    expect([condition(fn, 'Installed'), condition(fn, 'Healthy')]).toEqual(['True', 'True']);
    const revs = (await get(
      kube,
      `/apis/pkg.crossplane.io/v1/functionrevisions?labelSelector=pkg.crossplane.io/package=${xp.functionName}`,
    ))!.items as Obj[];
    expect(revs.map((r) => [r.spec.desiredState, r.status.endpoint])).toEqual([['Active', xp.functionEndpoint]]);
    // v2.2.1 with the External runtime establishes nothing of the Function package (no input CRD, no objectRefs on
    // the revision), though it does on v1.20 (crossplane-v1.test.ts): compositions carry the input inline, so nothing
    // here needs it.
    expect(revs[0]!.status.conditions.filter((c: Obj) => c.status === 'True').map((c: Obj) => c.type)).toEqual(
      expect.arrayContaining(['RevisionHealthy', 'RuntimeHealthy']),
    );

    await eventually(`Configuration ${CONFIGURATION_NAME} to be Healthy`, async () => {
      const conf = await get(kube, `/apis/pkg.crossplane.io/v1/configurations/${CONFIGURATION_NAME}`);
      return condition(conf, 'Installed') === 'True' && condition(conf, 'Healthy') === 'True' ? true : undefined;
    });
    const synthXrds = [...xp.files.keys()].filter((p) => p.endsWith('/definition.yaml')).length;
    const synthCompositions = [...xp.files.keys()].filter((p) => /\/composition-\w+\.yaml$/.test(p)).length;
    expect([synthXrds, synthCompositions]).toEqual([11, 17]);
    const xrds = (await get(kube, '/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions'))!.items as Obj[];
    expect(xrds.filter((x) => condition(x, 'Established') === 'True' && condition(x, 'Offered') === 'True').length).toBe(synthXrds);
    expect(xrds.every((x) => x.metadata.ownerReferences?.[0]?.kind === 'ConfigurationRevision')).toBe(true);
    const compositions = (await get(kube, '/apis/apiextensions.crossplane.io/v1/compositions'))!.items as Obj[];
    expect(compositions.length).toBe(synthCompositions);
  });

  it("behind Crossplane's own admission webhook, on loopback: an object a v2 Usage protects cannot be deleted", async () => {
    // v2 serves only the Usage webhook (no XRD or Composition validation); Usage moved to protection.crossplane.io.
    const cm = `/api/v1/namespaces/default/configmaps/protected-by-usage`;
    const usage = '/apis/protection.crossplane.io/v1beta1/namespaces/default/usages/protects-configmap';
    await apply(kube, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'protected-by-usage', namespace: 'default' } });
    await apply(kube, {
      apiVersion: 'protection.crossplane.io/v1beta1',
      kind: 'Usage',
      metadata: { name: 'protects-configmap', namespace: 'default' },
      spec: { of: { apiVersion: 'v1', kind: 'ConfigMap', resourceRef: { name: 'protected-by-usage' } }, reason: 'a test protects it' },
    });
    await eventually('the Usage controller to mark the ConfigMap in use', async () =>
      (await get(kube, cm))?.metadata.labels?.['crossplane.io/in-use'] === 'true' ? true : undefined,
    );
    const r = await kube.request('DELETE', cm);
    expect(r.code).toBe(409);
    expect(String(r.body.message)).toMatch(
      /admission webhook "nousages\.protection\.crossplane\.io" denied the request: This resource is in-use by 1 usage\(s\).*"a test protects it"/,
    );
    expect(await get(kube, cm)).toBeDefined();
    // Once the Usage is gone, the ConfigMap can go.
    expect((await kube.request('DELETE', usage)).code).toBeLessThan(300);
    await eventually('the ConfigMap to be deletable', async () => ((await kube.request('DELETE', cm)).code < 300 ? true : undefined));
  });
});

describe('claims, composed by Crossplane through our function', () => {
  it('every example claim synth writes gets its composite and its backend resource', async () => {
    expect(examples.size).toBe(17);
    await Promise.all([...examples.values()].map((claim) => apply(kube, claim)));
    const problems: string[] = [];
    const all = await Promise.all([...examples.values()].map(async (claim) => ({ claim, c: await composed(claim) })));
    for (const { claim, c } of all) {
      const backend = claim.spec.compositionRef.name.split('-')[0];
      if (c.composite.spec.compositionRef.name !== claim.spec.compositionRef.name)
        problems.push(`${claim.metadata.name}: composition ${c.composite.spec.compositionRef.name}`);
      if (backend === 'a8s' && c.resource.kind !== 'Object') problems.push(`${claim.metadata.name}: a8s composed a ${c.resource.kind}`);
      if (backend === 'a9s' && c.resource.apiVersion !== 'dataservices.anynines.com/v1')
        problems.push(`${claim.metadata.name}: a9s composed ${c.resource.apiVersion}`);
      const labels = c.resource.metadata.labels ?? {};
      if (labels['crossplane.io/claim-name'] !== claim.metadata.name || labels['crossplane.io/claim-namespace'] !== 'default')
        problems.push(`${claim.metadata.name}: claim labels ${JSON.stringify(labels)}`);
    }
    expect(problems).toEqual([]);
    // Crossplane reached the function over mTLS for each of them.
    const metrics = await (await fetch(xp.metrics.fn)).text();
    const ok = [...metrics.matchAll(/^klutch_function_run_function_total\{[^}]*result="ok"[^}]*\} (\d+)/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    expect(ok).toBeGreaterThanOrEqual(examples.size);
  });

  it('a8s: provider-kubernetes creates the PostgreSQL object the plan and parameters say', async () => {
    const c = await composed(example('example-postgresql-a8s'));
    expect(c.resource.spec.providerConfigRef.name).toBe('kubernetes-provider');
    expect(c.wrapped!.metadata).toMatchObject({ name: 'example-postgresql-a8s', namespace: 'default' });
    expect(c.wrapped!.spec).toMatchObject({
      version: 14,
      replicas: 1,
      volumeSize: '3Gi',
      resources: { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } },
      parameters: { maxConnections: 200, logMinMessages: 'warning', statementTimeoutMillis: 30000 },
    });
    const binding = await composed(example('example-servicebinding-a8s'));
    expect(binding.wrapped!.spec.instance).toEqual({
      apiVersion: 'postgresql.anynines.com/v1beta3',
      kind: 'Postgresql',
      name: 'example-postgresql-a8s',
      namespace: 'default',
    });
  });

  it('a9s: the provider-anynines ServiceInstance carries service, plan and broker parameters', async () => {
    const c = await composed(example('example-postgresql-a9s'));
    expect(c.resource.kind).toBe('ServiceInstance');
    expect(c.resource.spec.providerConfigRef.name).toBe('postgresql-service-broker');
    expect(c.resource.spec.forProvider).toMatchObject({
      serviceName: 'a9s-postgresql17',
      planName: 'postgresql-single-nano',
      acceptsIncomplete: true,
      parameters: { max_connections: 200, pg_log_min_messages: 'WARNING', statement_timeout: 30000 },
    });
  });
});

describe('a9s, up to the provider-anynines resource (stand-in: provider-anynines and the a9s service broker)', () => {
  it('every a9s claim goes Ready when the broker reports success, with its state on the claim', async () => {
    const claims = [...examples.values()].filter((c) => c.spec.compositionRef.name.startsWith('a9s-'));
    expect(claims.length).toBe(11);
    await Promise.all(
      claims.map(async (claim) => {
        const c = await composed(claim);
        await a9s.succeeded(c.resource.kind, c.resource.metadata.name);
      }),
    );
    const ready = await Promise.all(
      claims.map((claim) =>
        claimState(claim, 'Ready and DataServiceReady', (x) =>
          ['Ready', 'DataServiceReady'].every((t) => conditionOf(x, t)?.status === 'True'),
        ),
      ),
    );
    for (const [i, claim] of claims.entries()) {
      const live = ready[i]!;
      const state = claim.kind === 'Backup' ? live.status.managed?.status : live.status.managed?.state;
      // a9s Backups report the backup manager's `status`; the recipe maps it only where the API shows it.
      if (claim.kind !== 'Backup')
        expect(state, `${claim.metadata.name} status.managed`).toBe(claim.kind === 'Restore' ? 'done' : 'succeeded');
    }
  });

  it("a failed provisioning reaches the claim with the broker's message; in progress, the claim waits", async () => {
    const claim = extraClaim('example-postgresql-a9s', 'failing-postgresql-a9s');
    await apply(kube, claim);
    const c = await composed(claim);
    await a9s.inProgress('ServiceInstance', c.resource.metadata.name);
    const waiting = await claimState(claim, 'the broker state "in progress"', (x) => x.status?.managed?.state === 'in progress');
    expect(conditionOf(waiting, 'Ready')?.status).not.toBe('True');
    expect(conditionOf(waiting, 'DataServiceReady')).toBeUndefined();

    await a9s.failed('ServiceInstance', c.resource.metadata.name, 'broker: no capacity left for plan postgresql-single-nano');
    const failed = await claimState(claim, 'DataServiceReady False', (x) => conditionOf(x, 'DataServiceReady')?.status === 'False');
    expect(conditionOf(failed, 'DataServiceReady')).toMatchObject({ reason: 'ProvisioningFailed' });
    expect(conditionOf(failed, 'DataServiceReady')?.message).toContain('broker: no capacity left for plan postgresql-single-nano');
    expect(conditionOf(failed, 'Ready')?.status).not.toBe('True');
    expect(failed.status.managed.state).toBe('failed');
  });
});

/**
 * provider-kubernetes re-reads an Object's a8s object only on a poll: every minute here while the Object is Ready,
 * every 30 s while it is not (hard-coded in provider-kubernetes v1.3.1, internal/controller/cluster/object/object.go:163).
 * Status the operators write can take that long to reach a claim.
 */
const A8S_STATUS_MS = 45_000;
const FAILURE = 'pod failing-postgresql-a8s-0: 0/3 nodes have enough memory';

describe.concurrent('a8s, end to end through provider-kubernetes (stand-in: the a8s operators)', () => {
  /** What the claim `pending-postgresql-a8s` showed before the operator reported its cluster running. */
  let readyTooEarly: string | undefined;

  // Every a8s claim is composed and the operators act at once, so the waits below overlap (a poll can take 30 s).
  beforeAll(async () => {
    const pending = extraClaim('example-postgresql-a8s', 'pending-postgresql-a8s');
    const failing = extraClaim('example-postgresql-a8s', 'failing-postgresql-a8s');
    await Promise.all([apply(kube, pending), apply(kube, failing)]);
    const c = await composed(pending);
    await Promise.all(['example-servicebinding-a8s', 'example-backup-a8s', 'example-restore-a8s'].map((n) => composed(example(n))));
    await composed(failing);
    await eventually(`provider-kubernetes to sync Object ${c.resource.metadata.name}`, async () =>
      condition(await get(kube, c.resourcePath), 'Synced') === 'True' ? true : undefined,
    );
    // Crossplane re-composes as soon as the Object changes (realtime compositions): a few seconds show what it reports.
    for (const until = Date.now() + 5_000; Date.now() < until && !readyTooEarly; await new Promise((r) => setTimeout(r, 250))) {
      const live = await get(kube, claimPath(pending));
      const early = ['Ready', 'DataServiceReady'].filter((t) => conditionOf(live, t)?.status === 'True');
      if (early.length) readyTooEarly = `${early.join(' and ')} True while the a8s cluster is not running`;
    }
    await Promise.all([
      a8s.postgresqlRunning('default', 'pending-postgresql-a8s'),
      a8s.postgresqlRunning('default', 'example-postgresql-a8s'),
      a8s.postgresqlFailing('default', 'failing-postgresql-a8s', FAILURE),
      a8s.bindingImplemented('default', 'example-servicebinding-a8s', CREDENTIALS),
      a8s.backupSucceeded('default', 'example-backup-a8s', 'backup-0001'),
      a8s.restoreSucceeded('default', 'example-restore-a8s'),
    ]);
  }, 120_000);

  it('an a8s claim is not Ready until the PostgreSQL operator reports the cluster running', async ({ expect }) => {
    expect(readyTooEarly).toBeUndefined();
    await claimState(
      { ...example('example-postgresql-a8s'), metadata: { name: 'pending-postgresql-a8s', namespace: 'default' } },
      'Ready once the cluster runs',
      (x) => ['Ready', 'DataServiceReady'].every((t) => conditionOf(x, t)?.status === 'True'),
      A8S_STATUS_MS,
    );
  });

  it("the PostgreSQL operator's and the service-binding controller's status flows back to the claims, which go Ready", async () => {
    await claimState(
      example('example-postgresql-a8s'),
      'clusterStatus Running in status.managed, Ready',
      (x) =>
        x.status?.managed?.clusterStatus === 'Running' &&
        x.status.managed.readyReplicas === 1 &&
        conditionOf(x, 'Ready')?.status === 'True',
      A8S_STATUS_MS,
    );
    await claimState(
      example('example-servicebinding-a8s'),
      'implemented in status.managed, Ready',
      (x) => x.status?.managed?.implemented === true && conditionOf(x, 'Ready')?.status === 'True',
      A8S_STATUS_MS,
    );
  });

  it("the a8s ServiceBinding's Secret becomes the claim's <claim>-creds", async ({ expect }) => {
    // provider-kubernetes creates the Secret at once and fills it when it has read the binding's Secret.
    let seen: Obj | undefined;
    const secret = await eventually(
      'Secret default/example-servicebinding-a8s-creds with data',
      async () => {
        seen = await get(kube, '/api/v1/namespaces/default/secrets/example-servicebinding-a8s-creds');
        return Object.keys(seen?.data ?? {}).length > 0 ? seen! : undefined;
      },
      A8S_STATUS_MS,
    ).catch((err: Error) => {
      err.message += `; last seen: ${JSON.stringify(seen ?? null)}`;
      throw err;
    });
    const data = Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
    expect(data).toEqual({ ...CREDENTIALS });
  });

  it("the backup manager's Ready condition on a Backup and a Restore reaches their claims", async () => {
    await Promise.all([
      claimState(
        example('example-backup-a8s'),
        'backupID and the Ready condition BackupSucceeded in status.managed',
        (x) => x.status?.managed?.backupID === 'backup-0001' && hasReason(x.status.managed, 'BackupSucceeded'),
        A8S_STATUS_MS,
      ),
      claimState(
        example('example-restore-a8s'),
        'the Ready condition RestoreSucceeded in status.managed',
        (x) => hasReason(x.status?.managed, 'RestoreSucceeded'),
        A8S_STATUS_MS,
      ),
    ]);
  });

  it("an a8s PostgreSQL the operator cannot bring up reaches the claim with the operator's error", async ({ expect }) => {
    const claim = { ...example('example-postgresql-a8s'), metadata: { name: 'failing-postgresql-a8s', namespace: 'default' } };
    const failed = await claimState(
      claim,
      'DataServiceReady False',
      (x) => conditionOf(x, 'DataServiceReady')?.status === 'False',
      A8S_STATUS_MS,
    );
    expect(conditionOf(failed, 'DataServiceReady')?.message).toContain(FAILURE);
    expect(conditionOf(failed, 'Ready')?.status).not.toBe('True');
    expect(failed.status.managed.error).toBe(FAILURE);
  });
});

describe('changes to a claim', () => {
  it('a plan change and a parameter update reach the composed objects (a8s and a9s)', async () => {
    for (const name of ['example-postgresql-a8s', 'example-postgresql-a9s']) {
      const claim = example(name);
      claim.spec.plan = 'postgresql-single-small';
      claim.spec.parameters = { ...claim.spec.parameters, maxConnections: 300 };
      await apply(kube, claim);
    }
    await eventually('the a8s Postgresql to be resized and reconfigured', async () => {
      const pg = await get(kube, '/apis/postgresql.anynines.com/v1beta3/namespaces/default/postgresqls/example-postgresql-a8s');
      return pg?.spec.volumeSize === '10Gi' && pg.spec.resources.requests.memory === '2Gi' && pg.spec.parameters.maxConnections === 300
        ? true
        : undefined;
    });
    const c = await composed(example('example-postgresql-a9s'));
    await eventually('the a9s ServiceInstance to have the new plan and parameter', async () => {
      const si = await get(kube, c.resourcePath);
      return si?.spec.forProvider.planName === 'postgresql-single-small' && si.spec.forProvider.parameters.max_connections === 300
        ? true
        : undefined;
    });
  });
});

describe('deletion', () => {
  it('deleting the claims removes composites, composed resources and the a8s objects', async () => {
    const all = [...examples.values(), ...extras];
    const paths = (
      await Promise.all(
        all.map(async (claim) => {
          const c = await composed(claim);
          const composite = `/apis/${c.composite.apiVersion}/${plurals.get(claim.kind)!.composite}/${c.composite.metadata.name}`;
          return [composite, c.resourcePath, ...(c.wrappedPath ? [c.wrappedPath] : [])];
        }),
      )
    ).flat();
    for (const claim of all) {
      const r = await kube.request('DELETE', claimPath(claim));
      expect(r.code, `DELETE ${claim.metadata.name}`).toBeLessThan(300);
    }
    // provider-kubernetes requeues an Object being deleted under an exponential per-item backoff: allow for it.
    let left: string[] = [];
    await eventually(
      'every composite, composed resource and a8s object to be gone',
      async () => {
        left = (await Promise.all(paths.map(async (p) => ((await get(kube, p)) ? [p] : [])))).flat();
        return left.length === 0 ? true : undefined;
      },
      90_000,
    ).catch((err: Error) => {
      err.message += `; still there: ${left.join(', ')}`;
      throw err;
    });
  }, 120_000);
});

describe('processes', () => {
  it('a failing step names the process and its log file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-crossplane-fail-'));
    try {
      const pki = await crossplanePki(join(dir, 'pki'));
      rmSync(join(pki.crossplaneClient, 'tls.crt'));
      await expect(startCrossplaneCore(crossplaneBinaryPath('v2'), cp.clusters[CLUSTER]!, dir, pki)).rejects.toThrow(
        new RegExp(
          `crossplane of ${CLUSTER} exited \\(code 1\\) while waiting for Crossplane to serve /readyz and its webhook; ` +
            `its log is ${dir}/crossplane.log:[\\s\\S]*cannot load client TLS certificates`,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stop() ends Crossplane, the function and the provider', async () => {
    const pids = [...xp.pids];
    expect(pids.length).toBe(3);
    expect(pids.every(isAlive)).toBe(true);
    await xp.stop();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(join(xp.runDir, 'crossplane.log')), 'logs are kept').toBe(true);
    expect(existsSync(join(xp.runDir, 'pki')), 'keys are not').toBe(false);
  });
});
