/**
 * The one Pod platform of a test run (docs/decisions/shared-pod-platform.md): the cluster project's global setup
 * starts the sandbox (sandbox/sandbox.ts startSandbox, so its steps are what the tests exercise) once, and the Pod
 * suites use it from their workers through pod-platform.ts. What needs the sandbox's own objects (kubectl bind with
 * the OpenID provider, Crossplane's scale and package switch) runs here, asked for over a unix socket, one JSON line
 * per request and per answer.
 *
 * The package move (v1 → v2) changes the whole platform: the suites that use it with the default package hold it
 * (`hold`, a connection kept open while the file runs), and `exclusive` answers once every such file of the run has
 * let go, so the move never runs under another file's checks.
 */
import { appendFileSync, cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Sandbox, SandboxControlPlane } from '../../../sandbox/sandbox';
import type { NodeHandle } from '../../../harness/node/node';

/** The suites that run on the shared platform; the global setup starts it at once when the run includes one. */
export const POD_PLATFORM_FILES = [
  'test/cluster/crossplane-v2-native.test.ts',
  'test/cluster/cnpg.test.ts',
  'test/cluster/platform-pods.test.ts',
  'test/cluster/crossplane-claims.test.ts',
  'test/cluster/object-store.test.ts',
  'test/cluster/network-policies.test.ts',
  'test/cluster/release.test.ts',
  'test/cluster/why-not-ready.test.ts',
];
/** Of those, the ones that use it with the default package and must be done before the package moves. */
export const V1_FILES = [
  'test/cluster/cnpg.test.ts',
  'test/cluster/object-store.test.ts',
  'test/cluster/platform-pods.test.ts',
  'test/cluster/crossplane-claims.test.ts',
  'test/cluster/network-policies.test.ts',
  'test/cluster/release.test.ts',
  'test/cluster/why-not-ready.test.ts',
];
/** How long `exclusive` waits for the files holding the platform. */
const EXCLUSIVE_TIMEOUT_MS = 30 * 60_000;

/** What a worker gets: plain data (kubeconfig files, node handles, the sandbox's results). */
export interface PodPlatformHandle {
  /** Logs of the platform (clusters, backend, OpenID provider, synth output). */
  readonly dir: string;
  /** The sandbox's own output (its numbered steps and what they said). */
  readonly outputFile: string;
  readonly kubeconfigs: Sandbox['kubeconfigs'];
  readonly nodes: { readonly controlPlane: NodeHandle; readonly app: NodeHandle };
  readonly synthDir: string;
  readonly registry: Sandbox['registry'];
  readonly images: Sandbox['images'];
  readonly login: Sandbox['login'];
  readonly backendUrl: string;
  readonly oidcIssuer: string;
  readonly claims: Sandbox['claims'];
  readonly query?: readonly string[];
  readonly crossplaneRelease: string;
}

export type PodPlatformState = { handle: PodPlatformHandle } | { error: string; dir: string; outputFile: string };

/** The control plane alone, ready before the app cluster is bound and the sandbox's claims are made. */
export type ControlPlaneState = { controlPlane: SandboxControlPlane } | { error: string; dir: string; outputFile: string };

/** Where the control plane's state appears, beside the platform's (`stateFile`). */
export const controlPlaneStateFile = (stateFile: string): string => stateFile.replace(/(\.json)?$/, '.control-plane.json');

export type Request =
  | { op: 'start' }
  | { op: 'hold'; file: string }
  | { op: 'exclusive' }
  | { op: 'failed' }
  | { op: 'bind'; resource: string }
  | { op: 'backup' }
  | { op: 'stopCore' }
  | { op: 'startCore' }
  | { op: 'switchConfiguration'; files: [string, string][]; wait?: boolean };

export interface SharedPlatformServer {
  /** Starts the platform if it is not starting yet (the first worker's request does too). */
  start(): void;
  /** Stops the platform and the server; keeps the logs if the start or a test failed. */
  close(): Promise<void>;
}

/**
 * Serves the platform on `socket`; its state (a PodPlatformState) appears in `stateFile` once it is up or failed.
 * `v1Files`: the files of this run that hold the platform with the default package.
 */
export async function serveSharedPlatform(o: {
  dir: string;
  stateFile: string;
  socket: string;
  v1Files: readonly string[];
  log: (line: string) => void;
}): Promise<SharedPlatformServer> {
  mkdirSync(o.dir, { recursive: true });
  const outputFile = join(o.dir, 'sandbox-output.txt');
  writeFileSync(outputFile, '');
  let sandbox: Promise<Sandbox> | undefined;
  // A run ended while the platform starts (Ctrl-C, a failed unit project): the running step returns, then everything
  // it started is stopped (the sandbox's own interrupt).
  const interrupt = new AbortController();
  let keepLogs = false;
  // The nodes up so far: the control plane's before the sandbox is done (suites use it early), then both.
  let nodes: Record<string, NodeHandle> = {};
  // The kubelet removes a Pod's logs with the Pod, and a test's clean-up deletes its Pods: what a failing test's Pods
  // said is copied while they still run (a backup hung in a database Pod is read from that Pod's log).
  const keepPodLogs = () => {
    const to = join(o.dir, 'pod-logs-at-failure', new Date().toISOString().replace(/[:.]/g, '-'));
    for (const [role, n] of Object.entries(nodes))
      try {
        cpSync(join(n.runDir, 'kubelet', 'pod-logs'), join(to, role), { recursive: true });
      } catch (e) {
        o.log(`could not keep the Pod logs of node ${n.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    if (Object.keys(nodes).length) o.log(`the Pod logs at a test's failure are kept in ${to}`);
  };
  // Written whole, then renamed: a reader never sees half a file.
  const writeTo = (file: string, state: PodPlatformState | ControlPlaneState) => {
    writeFileSync(`${file}.tmp`, JSON.stringify(state));
    renameSync(`${file}.tmp`, file);
  };
  const write = (state: PodPlatformState) => writeTo(o.stateFile, state);
  const cpFile = controlPlaneStateFile(o.stateFile);
  const start = () =>
    (sandbox ??= (async () => {
      // Imported here: a run without Pod suites never loads the sandbox's modules.
      const [{ startSandbox }, { Steps }, { ensureCrossplane }, { ensureProviderKubernetes }] = await Promise.all([
        import('../../../sandbox/sandbox'),
        import('../../../sandbox/steps'),
        import('../../../harness/tools/crossplane'),
        import('../../../harness/tools/provider-kubernetes'),
      ]);
      await ensureCrossplane(undefined, 'v2');
      await ensureProviderKubernetes();
      o.log(`the shared Pod platform is starting (the sandbox); its output: ${outputFile}`);
      const started = Date.now();
      const s = await startSandbox({
        dir: join(o.dir, 'sandbox'),
        steps: new Steps((t) => appendFileSync(outputFile, t), interrupt.signal),
        onControlPlane: (cp) => {
          nodes = { controlPlane: cp.node };
          writeTo(cpFile, { controlPlane: cp });
        },
      });
      o.log(`the shared Pod platform is up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return s;
    })().then(
      (s) => {
        nodes = { ...s.nodes };
        write({
          handle: {
            dir: o.dir,
            outputFile,
            kubeconfigs: s.kubeconfigs,
            nodes: s.nodes,
            synthDir: s.synthDir,
            registry: s.registry,
            images: s.images,
            login: s.login,
            backendUrl: s.backendUrl,
            oidcIssuer: s.oidcIssuer,
            claims: s.claims,
            ...(s.query ? { query: s.query } : {}),
            crossplaneRelease: s.crossplane.release,
          },
        });
        return s;
      },
      (e: unknown) => {
        // A start the run's end interrupted has nothing to tell.
        keepLogs ||= !interrupt.signal.aborted;
        const failed = { error: e instanceof Error ? (e.stack ?? e.message) : String(e), dir: o.dir, outputFile };
        // Said where a reader of the run looks first: a file that got the control plane early (podControlPlane) fails
        // on what the platform's stop does to it, not on why the platform stopped.
        if (keepLogs) {
          appendFileSync(outputFile, `\nsandbox: ${failed.error}\n`);
          o.log(`the shared Pod platform failed to start: ${e instanceof Error ? e.message : String(e)} (${outputFile})`);
        }
        if (!existsSync(cpFile)) writeTo(cpFile, failed);
        write(failed);
        throw e;
      },
    ));

  // The package-move barrier: which v1 files have held the platform, which have let go.
  const held = new Set<string>();
  const done = new Set<string>();
  const waiters: (() => void)[] = [];
  const settle = () => {
    if (o.v1Files.every((f) => done.has(f))) for (const w of waiters.splice(0)) w();
  };
  const exclusive = () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const open = o.v1Files.filter((f) => !done.has(f));
        reject(
          new Error(
            `the platform stayed held for ${EXCLUSIVE_TIMEOUT_MS / 60_000} minutes by ${open.map((f) => `${f} (${held.has(f) ? 'holding' : 'not started'})`).join(', ')}`,
          ),
        );
      }, EXCLUSIVE_TIMEOUT_MS);
      waiters.push(() => (clearTimeout(timer), resolve()));
      settle();
    });

  const handle = async (r: Request, s: Socket): Promise<unknown> => {
    switch (r.op) {
      case 'start':
        void start().catch(() => undefined); // the state file carries the error
        return true;
      case 'hold': {
        const file = V1_FILES.find((f) => r.file.endsWith(f)) ?? r.file;
        held.add(file);
        s.once('close', () => (done.add(file), settle()));
        return true;
      }
      case 'exclusive':
        await exclusive();
        return true;
      case 'failed':
        keepLogs = true;
        keepPodLogs();
        return true;
      case 'bind':
        // The sandbox binds each API once, whichever files ask for it; a failed bind may be asked for again.
        return (await start()).bind(r.resource);
      case 'backup':
        return (await start()).backup();
      case 'stopCore':
        return (await start()).crossplane.stopCore();
      case 'startCore':
        return (await start()).crossplane.startCore();
      case 'switchConfiguration':
        return (await start()).crossplane.switchConfiguration(new Map(r.files), { wait: r.wait ?? true });
    }
  };
  const open = new Set<Socket>();
  const server: Server = createServer((s) => {
    open.add(s);
    s.on('error', () => s.destroy());
    s.once('close', () => open.delete(s));
    s.setEncoding('utf8');
    let buffered = '';
    s.on('data', (chunk: string) => {
      buffered += chunk;
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        const r = JSON.parse(line) as Request & { id: number };
        handle(r, s).then(
          (value) => s.writable && s.write(`${JSON.stringify({ id: r.id, ok: true, value: value ?? null })}\n`),
          (e: unknown) =>
            s.writable && s.write(`${JSON.stringify({ id: r.id, ok: false, error: e instanceof Error ? e.message : String(e) })}\n`),
        );
      }
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(o.socket, resolve));
  return {
    start: () => void start().catch(() => undefined),
    close: async () => {
      interrupt.abort();
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const s = await sandbox?.catch(() => undefined);
      await s?.stop();
      if (!keepLogs && existsSync(o.dir)) rmSync(o.dir, { recursive: true, force: true });
      else if (sandbox) o.log(`the shared Pod platform's logs are kept in ${o.dir}`);
    },
  };
}
