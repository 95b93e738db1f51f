/**
 * Real Kubernetes control planes on loopback for tests and benchmarks: one etcd, and per named cluster a
 * kube-apiserver (its own `--etcd-prefix`, RBAC, static tokens, service-account tokens) and a
 * kube-controller-manager running only the controllers tests rely on (namespace deletion, garbage collection,
 * service accounts and their tokens).
 *
 * Every process writes its log into a per-run folder (named in every error); `stop()` ends them all, and each process
 * also exits by itself when the process that started it dies (KUBE_EXIT_WITH_PARENT, test/kube/main.go), so a crashed
 * or killed test run leaves nothing running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ensureKubeBinary } from '../tools/kube';

/** A user of every cluster, authenticated by a static bearer token. RBAC grants it nothing until a test binds a role. */
export interface Identity {
  readonly name: string;
  readonly groups?: readonly string[];
}

export interface ControlPlaneOptions {
  /** Cluster names (DNS labels); each gets its own kube-apiserver on a free port. */
  readonly clusters: readonly string[];
  /** Extra static-token users on every cluster, besides the admin (`klutch-kit:admin` in `system:masters`). */
  readonly identities?: readonly Identity[];
  /** Start a kube-controller-manager per cluster (default true). */
  readonly controllerManager?: boolean;
  /** The multi-call binary; default: built from test/kube once (ensureKubeBinary). */
  readonly binary?: string;
  /** Where logs and state go; default a new folder under `$TMPDIR/klutch-kit-kube/`. */
  readonly runDir?: string;
  /** Progress lines; default stderr. */
  readonly log?: (line: string) => void;
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
}

export interface ControlPlanes {
  /** Logs of every process (`etcd.log`, `<cluster>/kube-apiserver.log`, ...) and the kubeconfigs. */
  readonly runDir: string;
  readonly clusters: Readonly<Record<string, ClusterInfo>>;
  /** Process ids of everything started, for checks that nothing is left behind. */
  readonly pids: readonly number[];
  /** Ends every process (SIGTERM, then SIGKILL after a grace period) and deletes state other than logs. */
  stop(): Promise<void>;
}

export const ADMIN = 'admin';
const ADMIN_USER = 'klutch-kit:admin';
const RUNS = join(tmpdir(), 'klutch-kit-kube');
/** Finished runs whose logs are kept for a look after the fact. */
const KEEP_RUNS = 5;
const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 10_000;

/** Starts one etcd and the named clusters; resolves when every API server is ready and its controllers run. */
export async function startControlPlanes(o: ControlPlaneOptions): Promise<ControlPlanes> {
  const names = [...o.clusters];
  for (const n of names) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n)) throw new Error(`cluster name "${n}" is not a DNS label: use lower-case letters, digits and '-'`);
  }
  if (new Set(names).size !== names.length) throw new Error(`cluster names repeat: ${names.join(', ')}`);
  const identities = o.identities ?? [];
  for (const id of identities) {
    if (id.name === ADMIN || !/^[a-z0-9][-a-z0-9.:]*$/.test(id.name)) throw new Error(`identity name "${id.name}" must be a lower-case name other than "${ADMIN}"`);
  }
  const log = o.log ?? ((line: string) => process.stderr.write(`[klutch-kit] ${line}\n`));
  const binary = o.binary ?? (await ensureKubeBinary());
  if (!existsSync(binary)) throw new Error(`the control-plane binary ${binary} does not exist: leave \`binary\` unset to build it (test/tools/kube.ts)`);
  pruneRuns();
  mkdirSync(RUNS, { recursive: true });
  const runDir = o.runDir ?? mkdtempSync(join(RUNS, `${new Date().toISOString().replace(/[:.]/g, '-')}-`));
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'owner.pid'), String(process.pid));

  const procs: Proc[] = [];
  const started = Date.now();
  const stop = async (): Promise<void> => {
    // Controllers first, then API servers, then their storage: nothing logs errors about a peer already gone.
    for (const group of [procs.filter((p) => p.role === 'kube-controller-manager'), procs.filter((p) => p.role === 'kube-apiserver'), procs.filter((p) => p.role === 'etcd')]) {
      await Promise.all(group.map((p) => p.stop()));
    }
    for (const n of names) rmSync(join(runDir, n, 'pki'), { recursive: true, force: true });
    rmSync(join(runDir, 'etcd-data'), { recursive: true, force: true });
    writeFileSync(join(runDir, 'finished'), new Date().toISOString());
  };

  try {
    const ports = await freePorts(2 + names.length);
    const etcdUrl = `http://127.0.0.1:${ports[0]}`;
    log(`starting etcd and ${names.length} cluster(s) (${names.join(', ')}); logs in ${runDir}`);
    const etcd = launch(binary, 'etcd', 'etcd', runDir, [
      '--name=etcd',
      `--data-dir=${join(runDir, 'etcd-data')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${ports[1]}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${ports[1]}`,
      `--initial-cluster=etcd=http://127.0.0.1:${ports[1]}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    procs.push(etcd);
    await waitReady(etcd, () => httpGet(`${etcdUrl}/health`).then((r) => r.code === 200 && r.body.includes('"true"')));

    const pending = names.map((name, i) => {
      const port = ports[2 + i]!;
      const dir = join(runDir, name);
      const pki = join(dir, 'pki');
      mkdirSync(pki, { recursive: true });
      const sa = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
      writeFileSync(join(pki, 'sa.pub'), sa.publicKey);
      writeFileSync(join(pki, 'sa.key'), sa.privateKey, { mode: 0o600 });
      const tokens: Record<string, string> = { [ADMIN]: token() };
      for (const id of identities) tokens[id.name] = token();
      // token,user,uid,"group1,group2" — the API server's static token file format.
      const rows = [`${tokens[ADMIN]},${ADMIN_USER},${ADMIN_USER},"system:masters"`, ...identities.map((id) => `${tokens[id.name]},${id.name},${id.name},"${(id.groups ?? []).join(',')}"`)];
      writeFileSync(join(pki, 'tokens.csv'), `${rows.join('\n')}\n`, { mode: 0o600 });
      const server = `https://127.0.0.1:${port}`;
      const apiserver = launch(binary, 'kube-apiserver', name, dir, [
        `--etcd-servers=${etcdUrl}`,
        `--etcd-prefix=/klutch-kit/${name}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        `--cert-dir=${pki}`,
        '--authorization-mode=RBAC',
        `--token-auth-file=${join(pki, 'tokens.csv')}`,
        // Each cluster its own issuer and key: a token of one is worthless on another.
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${join(pki, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--disable-admission-plugins=ServiceAccount',
        '--endpoint-reconciler-type=none',
        '--enable-priority-and-fairness=false',
        '--profiling=false',
      ]);
      procs.push(apiserver);
      return { name, dir, pki, server, tokens, apiserver };
    });
    const clusters: Record<string, ClusterInfo> = {};
    for (const c of pending) {
      await waitReady(c.apiserver, () => httpsGet(`${c.server}/readyz`).then((r) => r.code === 200));
      const ca = readFileSync(join(c.pki, 'apiserver.crt'), 'utf8');
      const kubeconfig = join(c.dir, 'admin.kubeconfig');
      writeFileSync(kubeconfig, kubeconfigYaml(c.name, c.server, ca, ADMIN, c.tokens[ADMIN]!), { mode: 0o600 });
      for (const id of identities) writeFileSync(join(c.dir, `${id.name.replace(/[^a-z0-9.-]/g, '-')}.kubeconfig`), kubeconfigYaml(c.name, c.server, ca, id.name, c.tokens[id.name]!), { mode: 0o600 });
      clusters[c.name] = { name: c.name, server: c.server, ca, tokens: c.tokens, kubeconfig };
    }

    if (o.controllerManager !== false) {
      for (const c of pending) {
        writeFileSync(join(c.pki, 'ca.crt'), clusters[c.name]!.ca);
        procs.push(
          launch(binary, 'kube-controller-manager', c.name, c.dir, [
            `--kubeconfig=${clusters[c.name]!.kubeconfig}`,
            '--controllers=namespace-controller,garbage-collector-controller,serviceaccount-token-controller,serviceaccount-controller,root-ca-certificate-publisher-controller',
            `--service-account-private-key-file=${join(c.pki, 'sa.key')}`,
            `--root-ca-file=${join(c.pki, 'ca.crt')}`,
            '--use-service-account-credentials=false',
            '--leader-elect=false',
            '--bind-address=127.0.0.1',
            '--secure-port=0',
          ]),
        );
      }
      // The service-account controller creates `default` in every namespace once its informers run: the sign that
      // the controllers are up.
      await Promise.all(
        pending.map((c) => {
          const kcm = procs.find((p) => p.role === 'kube-controller-manager' && p.cluster === c.name)!;
          return waitReady(kcm, () => httpsGet(`${c.server}/api/v1/namespaces/default/serviceaccounts/default`, c.tokens[ADMIN]).then((r) => r.code === 200));
        }),
      );
    }
    log(`control planes ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${pending.map((c) => `${c.name} ${c.server}`).join(', ')}`);
    return { runDir, clusters, pids: procs.map((p) => p.pid), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Processes.

interface Proc {
  readonly role: string;
  readonly cluster: string;
  readonly pid: number;
  readonly logPath: string;
  /** Exit code or signal once it has exited, else undefined. */
  exited(): string | undefined;
  stop(): Promise<void>;
}

function launch(binary: string, role: string, cluster: string, dir: string, args: string[]): Proc {
  mkdirSync(dir, { recursive: true });
  const logPath = join(dir, `${role}.log`);
  const fd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, [role, ...args], { stdio: ['ignore', fd, fd], env: { ...process.env, KUBE_EXIT_WITH_PARENT: '1' } });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new Error(`cannot start ${role} for ${cluster} from ${binary}`);
  let exit: string | undefined;
  const done = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal ?? `code ${code}`;
      resolve();
    });
    // Failing to start (not executable, say) emits 'error' and no 'exit'.
    child.once('error', (err) => {
      exit ??= `not started: ${err.message}`;
      resolve();
    });
  });
  // The parent-death guard covers crashes; this covers a plain process.exit() of the test runner.
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  return {
    role,
    cluster,
    pid: child.pid,
    logPath,
    exited: () => exit,
    stop: async () => {
      process.off('exit', onExit);
      if (exit !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await done;
      clearTimeout(timer);
    },
  };
}

async function waitReady(p: Proc, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const exit = p.exited();
    if (exit !== undefined) throw new Error(`${p.role} of ${p.cluster} exited (${exit}) before it was ready; its log is ${p.logPath}:\n${tail(p.logPath)}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${p.role} of ${p.cluster} was not ready after ${READY_TIMEOUT_MS / 1000}s; its log is ${p.logPath}:\n${tail(p.logPath)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function tail(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Deletes the state of finished or abandoned runs, keeping the logs of the newest few. */
function pruneRuns(): void {
  if (!existsSync(RUNS)) return;
  const runs = readdirSync(RUNS)
    .map((n) => join(RUNS, n))
    .filter((d) => !isLive(d))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  for (const d of runs.slice(KEEP_RUNS)) rmSync(d, { recursive: true, force: true });
  // An abandoned run (its owner was killed) still holds etcd data and keys.
  for (const d of runs.slice(0, KEEP_RUNS)) {
    rmSync(join(d, 'etcd-data'), { recursive: true, force: true });
    for (const c of readdirSync(d, { withFileTypes: true })) if (c.isDirectory()) rmSync(join(d, c.name, 'pki'), { recursive: true, force: true });
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

// ---------------------------------------------------------------------------------------------------------------------
// Small helpers.

function token(): string {
  return randomBytes(24).toString('hex');
}

async function freePorts(n: number): Promise<number[]> {
  // Hold every port until all are chosen, so the same one is never handed out twice.
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function httpGet(url: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 2000 }, (res) => collect(res, resolve));
    req.on('error', reject).on('timeout', () => req.destroy(new Error('timeout')));
  });
}

/** Readiness probes only: the CA is not known until the API server has written its certificate. */
function httpsGet(url: string, bearer?: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { timeout: 2000, rejectUnauthorized: false, headers: bearer ? { Authorization: `Bearer ${bearer}` } : {} }, (res) => collect(res, resolve));
    req.on('error', reject).on('timeout', () => req.destroy(new Error('timeout')));
  });
}

function collect(res: http.IncomingMessage, resolve: (r: { code: number; body: string }) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
}

/** A kubeconfig for one cluster and one token user. */
export function kubeconfigYaml(cluster: string, server: string, ca: string, user: string, bearer: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
    users: [{ name: user, user: { token: bearer } }],
    contexts: [{ name: cluster, context: { cluster, user } }],
    'current-context': cluster,
  });
}
