/**
 * Real Kubernetes control planes on loopback for tests and benchmarks: one etcd, and per named cluster a
 * kube-apiserver (its own `--etcd-prefix`, RBAC, static tokens, service-account tokens) and a
 * kube-controller-manager running only the controllers tests rely on (namespace deletion, garbage collection,
 * service accounts and their tokens).
 *
 * Built from named steps — `startEtcd`, `clusterCredentials`, `startApiServer`, `startControllerManager` — that
 * `startControlPlanes` runs in order. A running cluster's API server can be stopped, started and restarted on its
 * own (same port, certificates, tokens and keys, so every client keeps working once it is back), which the konnector
 * and backend suites use to show that nothing is lost while an API server is away.
 *
 * Every process writes its log into a per-run folder (named in every error); `stop()` ends them all, and each process
 * also exits by itself when the process that started it dies (KUBE_EXIT_WITH_PARENT, harness/tools/kube/main.go), so a crashed
 * or killed test run leaves nothing running.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ensureKubeBinary } from '../tools/kube';
import { freePorts, launch, probe, type Proc, waitReady } from './processes';

/** A user of every cluster, authenticated by a static bearer token. RBAC grants it nothing until a test binds a role. */
export interface TokenUser {
  readonly name: string;
  readonly groups?: readonly string[];
}

export interface ControlPlaneOptions {
  /** Cluster names (DNS labels); each gets its own kube-apiserver on a free port. */
  readonly clusters: readonly string[];
  /** Extra static-token users on every cluster, besides the admin (`klutch-kit:admin` in `system:masters`). */
  readonly identities?: readonly TokenUser[];
  /** Start a kube-controller-manager per cluster (default true). */
  readonly controllerManager?: boolean;
  /**
   * The clusters run Pods (they get a node, harness/node/): the ServiceAccount admission plugin on (default off,
   * as envtest), so Pods get their ServiceAccount and token volume, and the controller-manager also runs the
   * endpointslice, endpoints, node-lifecycle, deployment and replicaset controllers, so Services get endpoints, Ready
   * nodes take Pods and Deployments run, as in any cluster. It also sets up the API server's egress into the node
   * (`ClusterInfo.node`).
   */
  readonly pods?: boolean;
  /** The multi-call binary; default: built from harness/tools/kube once (ensureKubeBinary). */
  readonly binary?: string;
  /** Where logs and state go; default a new folder under `$TMPDIR/klutch-kit-kube/`. */
  readonly runDir?: string;
  /** Progress lines; default stderr. */
  readonly log?: (line: string) => void;
  /**
   * More arguments and environment per process role (`etcd`, `kube-apiserver`, `kube-controller-manager`), after
   * the harness's own (a repeated flag's last value wins): for benches that measure what a flag costs
   * (bench/control-plane-cost), not for suites.
   */
  readonly tuning?: Tuning;
}

/** Extra arguments and environment of each process role, for benches. */
export type Tuning = Partial<Record<'etcd' | 'kube-apiserver' | 'kube-controller-manager', RoleTuning>>;

export interface RoleTuning {
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** How to reach one cluster. Plain data, so it can cross from a vitest global setup to the test workers. */
export interface ClusterInfo {
  readonly name: string;
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** PEM of the CA that signed the API server's serving certificate. */
  readonly ca: string;
  /** Bearer token per identity name; `admin` is the cluster admin. */
  readonly tokens: Readonly<Record<string, string>>;
  /** Path of the admin kubeconfig. */
  readonly kubeconfig: string;
  /** Clusters started with `pods`: how the API server reaches the node's kubelets and Pods (harness/node/). */
  readonly node?: NodeAccess;
}

/**
 * The API server's way into a node's network namespace: its "cluster" egress (kubelets for logs and exec, Pod and
 * Service proxies, webhooks and aggregated APIs) goes as HTTP CONNECT over a unix socket, which the node serves
 * (harness/node/apiserver-bridge.ts); it authenticates to kubelets with a client certificate of its own CA.
 */
export interface NodeAccess {
  /** The unix socket the API server's cluster egress dials. */
  readonly egressSocket: string;
  /** PEM of the CA of the API server's kubelet client certificate: the kubelet's `authentication.x509.clientCAFile`. */
  readonly kubeletClientCa: string;
}

export interface ControlPlanes {
  /** Logs of every process (`etcd.log`, `<cluster>/kube-apiserver.log`, ...) and the kubeconfigs. */
  readonly runDir: string;
  /** The clusters that are ready: those started with the run, and each added one once it is up. */
  readonly clusters: Readonly<Record<string, ClusterInfo>>;
  /** Process ids of everything started so far (restarts included), for checks that nothing is left behind. */
  readonly pids: readonly number[];
  /**
   * Starts one more cluster (API server and controller manager) on the running etcd, with the same identities and
   * options; resolves when it is ready. A name that is already up, or being added, gives that cluster.
   */
  addCluster(name: string): Promise<ClusterInfo>;
  /** Stops a cluster's API server (SIGTERM, or SIGKILL with `crash`); its clients get connection refused. */
  stopApiServer(cluster: string, o?: { crash?: boolean }): Promise<void>;
  /** Starts a stopped API server again, on the same port with the same credentials; resolves when it is ready. */
  startApiServer(cluster: string): Promise<void>;
  /** `stopApiServer` then `startApiServer`. */
  restartApiServer(cluster: string, o?: { crash?: boolean }): Promise<void>;
  /** Ends every process (SIGTERM, then SIGKILL after a grace period) and deletes state other than logs. */
  stop(): Promise<void>;
}

export const ADMIN = 'admin';
const ADMIN_USER = 'klutch-kit:admin';
const RUNS = join(tmpdir(), 'klutch-kit-kube');
/** Finished runs whose logs are kept for a look after the fact. */
const KEEP_RUNS = 5;
/**
 * kube-apiserver closes its listener at once on SIGTERM but then lingers (about 10 s, draining nothing a test
 * needs: its state is in etcd) before it exits; it is killed after this grace.
 */
const API_SERVER_GRACE_MS = 2_000;

// ---------------------------------------------------------------------------------------------------------------------
// The steps.

/** Called with each process as soon as it is launched, so a caller can stop it even if the step then fails. */
export type Track = (p: Proc) => void;

export interface Etcd {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly proc: Proc;
}

/** Starts etcd (its data under `<runDir>/etcd-data`, thrown away at the end); resolves when `/health` says true. */
async function startEtcd(binary: string, runDir: string, track: Track = () => {}, tuning?: Tuning): Promise<Etcd> {
  const [client, peer] = await freePorts(2);
  const url = `http://127.0.0.1:${client}`;
  const proc = launchKube(binary, 'etcd', 'etcd', runDir, tuning, [
    '--name=etcd',
    `--data-dir=${join(runDir, 'etcd-data')}`,
    `--listen-client-urls=${url}`,
    `--advertise-client-urls=${url}`,
    `--listen-peer-urls=http://127.0.0.1:${peer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
    `--initial-cluster=etcd=http://127.0.0.1:${peer}`,
    '--unsafe-no-fsync',
    '--log-level=warn',
  ]);
  track(proc);
  await waitReady(proc, () => probe(`${url}/health`).then((r) => r.code === 200 && r.body.includes('"true"')));
  return { url, proc };
}

/** What a cluster's API server is started with: its port, folder, keys and tokens. Kept across restarts. */
export interface ClusterCredentials {
  readonly name: string;
  readonly port: number;
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** Logs and kubeconfigs. */
  readonly dir: string;
  /** Keys, token file, the serving certificate and its CA. */
  readonly pki: string;
  readonly tokens: Readonly<Record<string, string>>;
}

/**
 * Writes a cluster's credentials: its own service-account key pair (so a token of one cluster is worthless on
 * another) and a static token per identity, the admin in `system:masters`.
 */
function clusterCredentials(runDir: string, name: string, port: number, identities: readonly TokenUser[]): ClusterCredentials {
  const dir = join(runDir, name);
  const pki = join(dir, 'pki');
  mkdirSync(pki, { recursive: true });
  const sa = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  writeFileSync(join(pki, 'sa.pub'), sa.publicKey);
  writeFileSync(join(pki, 'sa.key'), sa.privateKey, { mode: 0o600 });
  const tokens: Record<string, string> = { [ADMIN]: token() };
  for (const id of identities) tokens[id.name] = token();
  // token,user,uid,"group1,group2" — the API server's static token file format.
  const rows = [
    `${tokens[ADMIN]},${ADMIN_USER},${ADMIN_USER},"system:masters"`,
    ...identities.map((id) => `${tokens[id.name]},${id.name},${id.name},"${(id.groups ?? []).join(',')}"`),
  ];
  writeFileSync(join(pki, 'tokens.csv'), `${rows.join('\n')}\n`, { mode: 0o600 });
  return { name, port, server: `https://127.0.0.1:${port}`, dir, pki, tokens };
}

/**
 * Starts a cluster's kube-apiserver (envtest's flag set, with RBAC) and resolves when `/readyz` answers 200. On the
 * first start it writes the admin and identity kubeconfigs; a restart reuses the serving certificate in `pki`.
 */
async function startApiServer(
  binary: string,
  etcd: Etcd,
  c: ClusterCredentials,
  track: Track = () => {},
  o: { pods?: boolean; tuning?: Tuning } = {},
): Promise<{ proc: Proc; info: ClusterInfo }> {
  const node = o.pods ? await nodeAccess(c) : undefined;
  const ca = await servingCertificate(c);
  // KLUTCH_KIT_AUDIT=1: every request's metadata (user agent, verb, resource) in <cluster>/audit.log, to see who keeps
  // an API server busy (docs/testing.md). Off by default: it costs a write per request.
  const audit = process.env.KLUTCH_KIT_AUDIT === '1';
  if (audit)
    writeFileSync(
      join(c.pki, 'audit-policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  omitStages: [RequestReceived]\n',
    );
  const proc = launchKube(binary, 'kube-apiserver', c.name, c.dir, o.tuning, [
    ...(audit
      ? [
          `--audit-policy-file=${join(c.pki, 'audit-policy.yaml')}`,
          `--audit-log-path=${join(c.dir, 'audit.log')}`,
          '--audit-log-maxbackup=0',
        ]
      : []),
    `--etcd-servers=${etcd.url}`,
    `--etcd-prefix=/klutch-kit/${c.name}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${c.port}`,
    `--tls-cert-file=${join(c.pki, 'serving.crt')}`,
    `--tls-private-key-file=${join(c.pki, 'serving.key')}`,
    '--authorization-mode=RBAC',
    `--token-auth-file=${join(c.pki, 'tokens.csv')}`,
    // Each cluster its own issuer and key: a token of one is worthless on another.
    `--service-account-issuer=${c.server}`,
    `--service-account-key-file=${join(c.pki, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(c.pki, 'sa.key')}`,
    `--service-cluster-ip-range=${SERVICE_RANGE}`,
    ...(o.pods ? [] : ['--disable-admission-plugins=ServiceAccount']),
    '--endpoint-reconciler-type=none',
    '--enable-priority-and-fairness=false',
    // KLUTCH_KIT_PROFILING=1: /debug/pprof (go tool pprof of a CPU profile: where the API server spends a run's CPU).
    `--profiling=${process.env.KLUTCH_KIT_PROFILING === '1'}`,
    ...(node
      ? [
          `--egress-selector-config-file=${join(c.pki, 'egress.yaml')}`,
          `--kubelet-client-certificate=${join(c.pki, 'kubelet-client.crt')}`,
          `--kubelet-client-key=${join(c.pki, 'kubelet-client.key')}`,
          // A node's name resolves nowhere; its address does, inside its namespace.
          '--kubelet-preferred-address-types=InternalIP',
        ]
      : []),
  ]);
  track(proc);
  await waitReady(proc, () => probe(`${c.server}/readyz`).then((r) => r.code === 200));
  const kubeconfig = join(c.dir, 'admin.kubeconfig');
  if (!existsSync(kubeconfig)) {
    writeFileSync(kubeconfig, bearerKubeconfigYaml(c.name, c.server, ca, ADMIN, c.tokens[ADMIN]!), { mode: 0o600 });
    for (const [id, t] of Object.entries(c.tokens)) {
      if (id !== ADMIN)
        writeFileSync(join(c.dir, `${id.replace(/[^a-z0-9.-]/g, '-')}.kubeconfig`), bearerKubeconfigYaml(c.name, c.server, ca, id, t), {
          mode: 0o600,
        });
    }
  }
  return { proc, info: { name: c.name, server: c.server, ca, tokens: c.tokens, kubeconfig, ...(node ? { node } : {}) } };
}

/**
 * Starts a cluster's kube-controller-manager with the controllers tests rely on; resolves when the `default`
 * ServiceAccount exists in `default` (only the serviceaccount controller makes it, so the controllers are up).
 */
async function startControllerManager(
  binary: string,
  c: ClusterCredentials,
  info: ClusterInfo,
  track: Track = () => {},
  o: { pods?: boolean; tuning?: Tuning } = {},
): Promise<Proc> {
  writeFileSync(join(c.pki, 'ca.crt'), info.ca);
  const controllers = [
    'namespace-controller',
    'garbage-collector-controller',
    'serviceaccount-token-controller',
    'serviceaccount-controller',
    'root-ca-certificate-publisher-controller',
    // Services get EndpointSlices (kube-proxy) and Endpoints (the API server's Service proxy, older clients); a new
    // Node loses its not-ready taint once its kubelet reports Ready; Deployments make ReplicaSets, which make Pods;
    // aggregated ClusterRoles get their rules (Crossplane's Helm chart grants core's RBAC that way); Jobs run and PVCs
    // bind to PersistentVolumes and are deleted (an operator's init Jobs and volumes: CNPG's, test/cluster/cnpg.test.ts).
    ...(o.pods
      ? [
          'endpointslice-controller',
          'endpoints-controller',
          'node-lifecycle-controller',
          'deployment-controller',
          'replicaset-controller',
          'clusterrole-aggregation-controller',
          'job-controller',
          'persistentvolume-binder-controller',
          // A deleted PVC or PV keeps the protection finalizer the API server adds until these see it unused.
          'persistentvolumeclaim-protection-controller',
          'persistentvolume-protection-controller',
          // A ResourceQuota is enforced only once this controller has written its status (a namespace whose quota
          // allows no LoadBalancer: the cnpg claim that fails with the operator's reason, test/cluster/cnpg.test.ts).
          'resourcequota-controller',
          // PodDisruptionBudgets get their status (disruptionsAllowed), which evictions read: the install bundle's
          // production Component (test/cluster/platform-pods.test.ts).
          'disruption-controller',
        ]
      : []),
  ];
  const proc = launchKube(binary, 'kube-controller-manager', c.name, c.dir, o.tuning, [
    `--kubeconfig=${info.kubeconfig}`,
    `--controllers=${controllers.join(',')}`,
    `--service-account-private-key-file=${join(c.pki, 'sa.key')}`,
    `--root-ca-file=${join(c.pki, 'ca.crt')}`,
    '--use-service-account-credentials=false',
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    '--secure-port=0',
  ]);
  track(proc);
  await waitReady(proc, () =>
    probe(`${c.server}/api/v1/namespaces/default/serviceaccounts/default`, c.tokens[ADMIN]).then((r) => r.code === 200),
  );
  return proc;
}

// ---------------------------------------------------------------------------------------------------------------------
// All steps together.

/** Starts one etcd and the named clusters; resolves when every API server is ready and its controllers run. */
export async function startControlPlanes(o: ControlPlaneOptions): Promise<ControlPlanes> {
  const names = [...o.clusters];
  for (const n of names) checkClusterName(n);
  if (new Set(names).size !== names.length) throw new Error(`cluster names repeat: ${names.join(', ')}`);
  const identities = o.identities ?? [];
  for (const id of identities) {
    if (id.name === ADMIN || !/^[a-z0-9][-a-z0-9.:]*$/.test(id.name)) {
      throw new Error(`identity name "${id.name}" must be a lower-case name other than "${ADMIN}"`);
    }
  }
  const log = o.log ?? ((line: string) => process.stderr.write(`[klutch-kit] ${line}\n`));
  const binary = o.binary ?? (await ensureKubeBinary());
  if (!existsSync(binary))
    throw new Error(`the control-plane binary ${binary} does not exist: leave \`binary\` unset to build it (harness/tools/kube.ts)`);
  pruneRuns();
  mkdirSync(RUNS, { recursive: true });
  const runDir = o.runDir ?? mkdtempSync(join(RUNS, `${new Date().toISOString().replace(/[:.]/g, '-')}-`));
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'owner.pid'), String(process.pid));

  const podOptions = { pods: o.pods, tuning: o.tuning };
  const all: Proc[] = [];
  const apiServers = new Map<string, Proc>();
  const controllerManagers: Proc[] = [];
  const credentials = new Map<string, ClusterCredentials>();
  const clusters: Record<string, ClusterInfo> = {};
  /** Clusters being added after the start (addCluster), so a second call for the same name waits for the first. */
  const adding = new Map<string, Promise<ClusterInfo>>();
  let etcd: Etcd | undefined;
  let stopped = false;
  const started = Date.now();
  const track: Track = (p) => all.push(p);
  const stop = async (): Promise<void> => {
    stopped = true;
    // Controllers first, then API servers, then their storage: nothing logs errors about a peer already gone.
    await Promise.all(controllerManagers.map((p) => p.stop()));
    await Promise.all([...apiServers.values()].map((p) => p.stop(API_SERVER_GRACE_MS)));
    await etcd?.proc.stop();
    for (const n of credentials.keys()) rmSync(join(runDir, n, 'pki'), { recursive: true, force: true });
    rmSync(join(runDir, 'etcd-data'), { recursive: true, force: true });
    writeFileSync(join(runDir, 'finished'), new Date().toISOString());
  };
  /** API servers of all `names` at once (each waits for its own /readyz), then their controller managers. */
  const startClusters = async (batch: readonly string[]): Promise<void> => {
    const ports = await freePorts(batch.length);
    batch.forEach((n, i) => credentials.set(n, clusterCredentials(runDir, n, ports[i]!, identities)));
    const servers = await Promise.all(
      batch.map((n) =>
        startApiServer(
          binary,
          etcd!,
          credentials.get(n)!,
          (p) => {
            track(p);
            apiServers.set(n, p);
          },
          podOptions,
        ).then((r) => ({ n, ...r })),
      ),
    );
    if (o.controllerManager !== false) {
      await Promise.all(
        servers.map((s) =>
          startControllerManager(
            binary,
            credentials.get(s.n)!,
            s.info,
            (p) => {
              track(p);
              controllerManagers.push(p);
            },
            podOptions,
          ),
        ),
      );
    }
    // Listed once its controllers run: a cluster in `clusters` is ready.
    for (const s of servers) clusters[s.n] = s.info;
  };

  try {
    log(`starting etcd and ${names.length} cluster(s) (${names.join(', ')}); logs in ${runDir}`);
    etcd = await startEtcd(binary, runDir, track, o.tuning);
    await startClusters(names);
    log(
      `control planes ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${names.map((n) => `${n} ${clusters[n]!.server}`).join(', ')}`,
    );
  } catch (err) {
    await Promise.all(all.map((p) => p.stop()));
    await stop();
    throw err;
  }

  const known = (cluster: string): ClusterCredentials => {
    const c = credentials.get(cluster);
    if (!c) throw new Error(`no cluster "${cluster}" in this run; it has ${[...credentials.keys()].join(', ')}`);
    return c;
  };
  const stopApiServer = async (cluster: string, s: { crash?: boolean } = {}) => {
    known(cluster);
    const p = apiServers.get(cluster);
    if (p) await (s.crash ? p.kill() : p.stop(API_SERVER_GRACE_MS));
  };
  const startAgain = async (cluster: string) => {
    const c = known(cluster);
    if (apiServers.get(cluster)?.exited() === undefined) throw new Error(`the API server of ${cluster} is running: stop it first`);
    await startApiServer(
      binary,
      etcd!,
      c,
      (p) => {
        all.push(p);
        apiServers.set(cluster, p);
      },
      podOptions,
    );
  };
  const addCluster = (name: string): Promise<ClusterInfo> => {
    const ready = clusters[name];
    if (ready) return Promise.resolve(ready);
    let p = adding.get(name);
    if (!p) {
      p = (async () => {
        checkClusterName(name);
        if (stopped) throw new Error(`cannot add cluster ${name}: the control planes of ${runDir} are stopped`);
        const t = Date.now();
        await startClusters([name]);
        log(`cluster ${name} added in ${((Date.now() - t) / 1000).toFixed(1)}s: ${clusters[name]!.server}`);
        return clusters[name]!;
      })();
      adding.set(name, p);
    }
    return p;
  };
  return {
    runDir,
    clusters,
    get pids() {
      return all.map((p) => p.pid);
    },
    addCluster,
    stopApiServer,
    startApiServer: startAgain,
    restartApiServer: async (cluster, s) => {
      await stopApiServer(cluster, s);
      await startAgain(cluster);
    },
    stop,
  };
}

function checkClusterName(n: string): void {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n))
    throw new Error(`cluster name "${n}" is not a DNS label: use lower-case letters, digits and '-'`);
}

// ---------------------------------------------------------------------------------------------------------------------
// Helpers.

/**
 * Environment of each role before a bench's `tuning`. The API server's Go collector runs at half the rate: it was a
 * third of the API server's CPU while CRDs change, and GOGC=200 cut a cluster's CPU for installing and deleting the
 * claim suite's CRDs twice by a quarter (13.1 -> 9.8 CPU-s) for 250 MiB more (bench/control-plane-cost,
 * docs/decisions/test-control-planes.md).
 */
const ROLE_ENV: Partial<Record<keyof Tuning, Readonly<Record<string, string>>>> = { 'kube-apiserver': { GOGC: '200' } };

/** One mode of the multi-call binary, exiting by itself when its parent dies. */
function launchKube(binary: string, role: keyof Tuning, owner: string, dir: string, tuning: Tuning | undefined, args: string[]): Proc {
  const t = tuning?.[role];
  return launch({
    command: binary,
    args: [role, ...args, ...(t?.args ?? [])],
    role,
    owner,
    logDir: dir,
    env: { ...process.env, ...ROLE_ENV[role], ...t?.env, KUBE_EXIT_WITH_PARENT: '1' },
  });
}

/** Deletes the state of finished or abandoned runs, keeping the logs of the newest few. */
function pruneRuns(): void {
  if (!existsSync(RUNS)) return;
  // Runs in other processes prune at the same time: a folder listed here may be gone a moment later.
  const gone = (f: () => void) => {
    try {
      f();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  };
  const runs: { dir: string; mtime: number }[] = [];
  for (const n of readdirSync(RUNS)) {
    const dir = join(RUNS, n);
    gone(() => isLive(dir) || runs.push({ dir, mtime: statSync(dir).mtimeMs }));
  }
  runs.sort((a, b) => b.mtime - a.mtime);
  for (const { dir } of runs.slice(KEEP_RUNS)) gone(() => rmSync(dir, { recursive: true, force: true }));
  // An abandoned run (its owner was killed) still holds etcd data and keys.
  for (const { dir } of runs.slice(0, KEEP_RUNS)) {
    gone(() => {
      rmSync(join(dir, 'etcd-data'), { recursive: true, force: true });
      for (const c of readdirSync(dir, { withFileTypes: true }))
        if (c.isDirectory()) rmSync(join(dir, c.name, 'pki'), { recursive: true, force: true });
    });
  }
}

function isLive(runDir: string): boolean {
  try {
    if (existsSync(join(runDir, 'finished'))) return false;
    // Just created by another run that has not written its owner yet.
    if (!existsSync(join(runDir, 'owner.pid'))) return Date.now() - statSync(runDir).mtimeMs < 60_000;
    process.kill(Number(readFileSync(join(runDir, 'owner.pid'), 'utf8')), 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * For a cluster that runs Pods: the egress selector configuration (cluster egress as HTTP CONNECT over
 * `<dir>/node-egress.sock`) and the kubelet client certificate with its CA, made once (a restart reuses them).
 */
async function nodeAccess(c: ClusterCredentials): Promise<NodeAccess> {
  const egressSocket = join(c.dir, 'node-egress.sock');
  const caFile = join(c.pki, 'kubelet-client-ca.crt');
  if (!existsSync(caFile)) {
    // Loaded only here: the certificate library is a large import that clusters without Pods do not need.
    const { createCa } = await import('./pki');
    const ca = await createCa(`klutch-kit kubelet clients of ${c.name}`);
    // system:masters: the kubelets of the harness authorise with AlwaysAllow anyway; the group names the caller.
    const client = await ca.issue({ commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usages: ['client'] });
    writeFileSync(join(c.pki, 'kubelet-client.crt'), client.cert);
    writeFileSync(join(c.pki, 'kubelet-client.key'), client.key, { mode: 0o600 });
    writeFileSync(
      join(c.pki, 'egress.yaml'),
      stringify({
        apiVersion: 'apiserver.k8s.io/v1beta1',
        kind: 'EgressSelectorConfiguration',
        egressSelections: [
          { name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: egressSocket } } } },
        ],
      }),
    );
    writeFileSync(caFile, ca.cert);
  }
  return { egressSocket, kubeletClientCa: readFileSync(caFile, 'utf8') };
}

const SERVICE_RANGE = '10.0.0.0/24';
/** The Service IP of `kubernetes.default` in every harness cluster: the first of SERVICE_RANGE. */
const KUBERNETES_SERVICE_IP = '10.0.0.1';

/**
 * The API server's serving certificate, ECDSA P-256, from a CA of the cluster's own (`serving-ca.crt`, what its
 * clients trust: ClusterInfo.ca, the kubeconfigs, kube-root-ca.crt); made on the first start, reused by a restart.
 * Without one, kube-apiserver makes itself an RSA-2048 certificate in --cert-dir, and every new client connection
 * then costs it an RSA signature: 1.8 ms of its CPU against 0.2 for a request on a kept connection
 * (bench/control-plane-handshakes, docs/decisions/test-control-plane-cost.md). The names are those kube-apiserver
 * gives its own: loopback for the harness's clients, the Service IP and names for Pods (harness/node/).
 */
async function servingCertificate(c: ClusterCredentials): Promise<string> {
  const caFile = join(c.pki, 'serving-ca.crt');
  if (!existsSync(caFile)) {
    // Loaded only here: a large import that the test workers, which only read ClusterInfo, do not need.
    const { createCa } = await import('./pki');
    // A year, as kube-apiserver's own: a sandbox (npm run sandbox) may run for days.
    const ca = await createCa(`klutch-kit API server CA of ${c.name}`, 365);
    const serving = await ca.issue({
      commonName: 'kube-apiserver',
      ips: ['127.0.0.1', KUBERNETES_SERVICE_IP],
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
      validDays: 365,
    });
    writeFileSync(join(c.pki, 'serving.crt'), serving.cert);
    writeFileSync(join(c.pki, 'serving.key'), serving.key, { mode: 0o600 });
    // Last: its presence means the pair is complete.
    writeFileSync(caFile, ca.cert);
  }
  return readFileSync(caFile, 'utf8');
}

function token(): string {
  return randomBytes(24).toString('hex');
}

/** A kubeconfig for one cluster and one token user. */
export function bearerKubeconfigYaml(cluster: string, server: string, ca: string, user: string, bearer: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
    users: [{ name: user, user: { token: bearer } }],
    contexts: [{ name: cluster, context: { cluster, user } }],
    'current-context': cluster,
  });
}
