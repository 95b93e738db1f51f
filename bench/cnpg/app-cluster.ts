/**
 * bench/cnpg from the app cluster (the default mode): the sandbox's platform (sandbox/sandbox.ts, its own code: two
 * clusters with a node each, Crossplane from its chart, the install bundle, CloudNativePG, the konnector bound with
 * kubectl bind), then BENCH_CLAIMS cnpg PostgresqlInstance claims, each with its ServiceBinding, created in the app
 * cluster as a developer creates them (the sandbox's examples), BENCH_PARALLEL at a time. Per claim, from its create
 * request in the app cluster:
 * - `<binding>-creds` in the app cluster, the claim Ready there;
 * - PostgreSQL accepting connections, and a query answered with those credentials, from a Pod of the app cluster
 *   (app-client.ts) at the address the credentials name; the address arrives with them, so a connection cannot come
 *   earlier than the credentials;
 * - on the control plane: the claim arriving (the konnector), CNPG's Cluster created, the Cluster healthy — the
 *   operator's own time, Cluster created → healthy, measured in the same run.
 * Claims are deleted in the app cluster once measured, as in the control-plane mode. Ctrl-C stops the sandbox
 * (nodes, network namespaces, mounts, processes) and removes the run's folder before exiting with 130.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrossplaneTarget } from '../../apis/api';
import { Interrupted, seconds, Steps } from '../../sandbox/steps';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox';
import { parseYaml } from '../../harness/crossplane/catalog';
import { getObject, kubeFromConfig, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import { localVolumes } from '../../harness/node/cnpg';
import { type AppClient, type Creds, startAppClient } from './app-client';
import { loadLine, row, sampleLoad, table, writeResult } from './report';
import { sleep } from '../../lib/abort';

/** The namespace the sandbox binds in the app cluster (its claims live there). */
const NS = 'default';
const HEALTHY = 'Cluster in healthy state';
const POLL_MS = 200;
const CLAIM_DEADLINE_MS = 600_000;

export interface AppClusterOptions {
  readonly claims: number;
  readonly parallel: number;
  readonly crossplane: CrossplaneTarget;
  /** Where the sandbox keeps its logs; kept afterwards. Default: a temporary folder, removed at the end. */
  readonly dir?: string;
  readonly resultFile: string;
  readonly log: (line: string) => void;
}

interface Sample {
  readonly name: string;
  readonly toCredsMs: number;
  readonly toAcceptingMs: number;
  readonly toAnsweredMs: number;
  readonly toClaimReadyMs: number;
  readonly toControlPlaneMs: number;
  readonly toClusterMs: number;
  readonly toHealthyMs: number;
  readonly operatorMs: number;
}

const ready = (o: WireObject | undefined) =>
  (o?.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');
const decode = (d: Record<string, string>): Creds => {
  const v = (k: keyof Creds) => Buffer.from(d[k] ?? '', 'base64').toString();
  return { instance_service: v('instance_service'), database: v('database'), username: v('username'), password: v('password') };
};

export async function benchFromAppCluster(o: AppClusterOptions): Promise<void> {
  const { log } = o;
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'klutch-kit-bench-cnpg-'));
  const removeDir = () => (o.dir ? undefined : rmSync(dir, { recursive: true, force: true }));
  const interrupt = new AbortController();
  const steps = new Steps((t) => process.stderr.write(t), interrupt.signal);
  process.setMaxListeners(100); // every harness process registers an exit handler
  let sandbox: Sandbox | undefined;
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      const t = Date.now();
      await sandbox?.stop();
      removeDir();
      if (sandbox) log(`stopped everything in ${seconds(Date.now() - t)}`);
    })());
  process.once('SIGINT', () => {
    // A second Ctrl-C ends at once; every process started has a parent-death signal and follows.
    process.once('SIGINT', () => process.exit(130));
    log('Ctrl-C: stopping everything ...');
    interrupt.abort(new Interrupted());
    // While the sandbox starts, startSandbox stops what it started and throws Interrupted (handled below).
    if (sandbox) void stopAll().finally(() => process.exit(130));
  });

  try {
    sandbox = await startSandbox({ dir, steps, crossplane: o.crossplane });
  } catch (e) {
    removeDir();
    if (e instanceof Interrupted) {
      log('stopped; nothing is left running');
      process.exit(130);
    }
    throw e;
  }
  const sb = sandbox;
  try {
    const upIn = steps.total();
    log(`the sandbox's platform is up in ${upIn}; ${o.claims} claims from the app cluster, ${o.parallel} at a time`);
    const ka = kubeFromConfig(readFileSync(sb.kubeconfigs.app, 'utf8'));
    const kc = kubeFromConfig(readFileSync(sb.kubeconfigs.controlPlane, 'utf8'));
    const cpNs = sb.claims.providerNamespace;
    const example = (name: string): WireObject => {
      const text = sb.files.get(`packages/dataservices/examples/${name}.yaml`);
      if (!text) throw new Error(`the synth output has no example ${name}: bench/cnpg needs a package with the cnpg backend`);
      return parseYaml(text)[0] as WireObject;
    };
    const [claimExample, bindingExample] = [example('postgresql-cnpg'), example('servicebinding-cnpg')];
    // One volume per claim: the harness's volumes are Retained, a released one is not bound again.
    await localVolumes(kc, join(sb.nodes.controlPlane.runDir, 'bench-volumes'), o.claims, '1Gi', 'bench');
    const client = await startAppClient(ka, NS);

    const one = (name: string) => measure(name, { ka, kc, cpNs, client, claimExample, bindingExample, signal: interrupt.signal });
    const samples: Sample[] = [];
    const names = Array.from({ length: o.claims }, (_, i) => `bench-pg-${i}`);
    const load = sampleLoad();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: o.parallel }, async () => {
        for (let name = names.shift(); name; name = names.shift()) {
          const s = await one(name);
          samples.push(s);
          log(
            `${name}: creds ${seconds(s.toCredsMs)}, accepting ${seconds(s.toAcceptingMs)}, query ${seconds(s.toAnsweredMs)}, Ready ${seconds(s.toClaimReadyMs)}; operator ${seconds(s.operatorMs)}`,
          );
          // Deleted at once in the app cluster, as a developer would: the konnector and Crossplane remove the Cluster.
          await requireOk(ka, 'DELETE', `/apis/anynines.com/v1/namespaces/${NS}/servicebindings/${name}-binding`);
          await requireOk(ka, 'DELETE', `/apis/anynines.com/v1/namespaces/${NS}/postgresqlinstances/${name}`);
        }
      }),
    );
    const totalMs = performance.now() - started;
    const loadAverage = load.stop();

    const col = (f: (s: Sample) => number) => samples.map(f);
    const rows = [
      row(
        'claim created → accepting connections from the app cluster',
        col((s) => s.toAcceptingMs),
      ),
      row(
        'claim created → query answered with <binding>-creds (app cluster)',
        col((s) => s.toAnsweredMs),
      ),
      row(
        'claim created → <binding>-creds in the app cluster',
        col((s) => s.toCredsMs),
      ),
      row(
        'claim created → claim Ready in the app cluster',
        col((s) => s.toClaimReadyMs),
      ),
      row(
        "operator's own: Cluster created → Cluster healthy",
        col((s) => s.operatorMs),
      ),
      row(
        'before CNPG: claim created → claim on the control plane',
        col((s) => s.toControlPlaneMs),
      ),
      row(
        'before CNPG: claim created → Cluster created',
        col((s) => s.toClusterMs),
      ),
      row(
        'after CNPG: Cluster healthy → claim Ready in the app cluster',
        col((s) => s.toClaimReadyMs - s.toHealthyMs),
      ),
      row(
        'after CNPG: Cluster healthy → query answered (app cluster)',
        col((s) => s.toAnsweredMs - s.toHealthyMs),
      ),
      row(
        "the platform's share: query answered − operator's own",
        col((s) => s.toAnsweredMs - s.operatorMs),
      ),
    ];
    console.log(`\n${table(rows)}`);
    console.log(`${o.claims} claims, ${o.parallel} at a time, in ${seconds(totalMs)}; ${loadLine(loadAverage)}`);
    console.log(
      `the sandbox's platform (--crossplane ${o.crossplane}) came up in ${upIn} before the claims; connections from a Pod of the app cluster to the address in <binding>-creds`,
    );
    writeResult(o.resultFile, {
      mode: 'app-cluster',
      where:
        "claims and ServiceBindings created in the app cluster of the sandbox's platform; connections from a Pod of the app cluster to the address in <binding>-creds",
      crossplane: o.crossplane,
      claims: o.claims,
      parallel: o.parallel,
      plan: claimExample.spec.plan,
      rows,
      totalMs,
      loadAverage,
      sandboxSteps: steps.timings,
      samples,
    });
    log(`wrote ${o.resultFile}`);
  } finally {
    await stopAll();
    // Ctrl-C during the claims: what failed because the clusters went away is not the bench's error.
    if (interrupt.signal.aborted) process.exit(130);
  }
}

interface Context {
  readonly ka: Kube;
  readonly kc: Kube;
  readonly cpNs: string;
  readonly client: AppClient;
  readonly claimExample: WireObject;
  readonly bindingExample: WireObject;
  readonly signal: AbortSignal;
}

/** One claim and its binding, created in the app cluster and timed from the claim's create request. */
async function measure(name: string, c: Context): Promise<Sample> {
  const binding = `${name}-binding`;
  const t0 = performance.now();
  await requireOk(c.ka, 'POST', `/apis/anynines.com/v1/namespaces/${NS}/postgresqlinstances`, {
    ...c.claimExample,
    metadata: { name, namespace: NS },
  });
  await requireOk(c.ka, 'POST', `/apis/anynines.com/v1/namespaces/${NS}/servicebindings`, {
    ...c.bindingExample,
    metadata: { name: binding, namespace: NS },
    spec: { ...c.bindingExample.spec, instanceRef: name },
  });
  const at: Partial<Record<'creds' | 'ready' | 'controlPlane' | 'cluster' | 'healthy', number>> = {};
  const abort = new AbortController();
  const onAbort = () => abort.abort(c.signal.reason);
  c.signal.addEventListener('abort', onAbort, { once: true });
  let probe: ReturnType<AppClient['probe']> | undefined;
  try {
    const deadline = t0 + CLAIM_DEADLINE_MS;
    while (at.creds === undefined || at.ready === undefined || at.controlPlane === undefined || at.healthy === undefined) {
      if (c.signal.aborted) throw c.signal.reason;
      if (performance.now() > deadline)
        throw new Error(`bench/cnpg: ${name} not ready after ${CLAIM_DEADLINE_MS / 1000} s: ${JSON.stringify(at)}`);
      const now = performance.now();
      const [secret, claim, upstream, cluster] = await Promise.all([
        at.creds === undefined ? getObject(c.ka, `/api/v1/namespaces/${NS}/secrets/${binding}-creds`) : undefined,
        at.ready === undefined ? getObject(c.ka, `/apis/anynines.com/v1/namespaces/${NS}/postgresqlinstances/${name}`) : undefined,
        at.controlPlane === undefined
          ? getObject(c.kc, `/apis/anynines.com/v1/namespaces/${c.cpNs}/postgresqlinstances/${name}`)
          : undefined,
        at.healthy === undefined ? getObject(c.kc, `/apis/postgresql.cnpg.io/v1/namespaces/${c.cpNs}/clusters/${name}`) : undefined,
      ]);
      if (secret && Object.keys(secret.data ?? {}).length) {
        at.creds = now;
        // The address arrives with the credentials: the app cluster can try to connect from now on.
        probe = c.client.probe(decode(secret.data), abort.signal);
        probe.catch(() => undefined); // awaited below; a failure before then must not be unhandled
      }
      if (ready(claim)) at.ready = now;
      if (upstream) at.controlPlane = now;
      if (cluster) at.cluster ??= now;
      if (cluster?.status?.phase === HEALTHY && cluster.status.readyInstances === cluster.spec.instances) at.healthy = now;
      await sleep(POLL_MS);
    }
    const timer = setTimeout(() => abort.abort(new Error('deadline')), Math.max(0, deadline - performance.now()));
    const p = await probe!.finally(() => clearTimeout(timer));
    return {
      name,
      toCredsMs: at.creds - t0,
      toAcceptingMs: p.acceptingAt - t0,
      toAnsweredMs: p.answeredAt - t0,
      toClaimReadyMs: at.ready - t0,
      toControlPlaneMs: at.controlPlane - t0,
      toClusterMs: at.cluster! - t0,
      toHealthyMs: at.healthy - t0,
      operatorMs: at.healthy - at.cluster!,
    };
  } finally {
    c.signal.removeEventListener('abort', onAbort);
    abort.abort(new Error('measured'));
  }
}
