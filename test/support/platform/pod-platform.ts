/**
 * The shared Pod platform as a test worker sees it (shared-platform.ts starts it once per run): the two clusters'
 * admin clients, their nodes (attached: commands inside them, their Pods' logs, forwards), the sandbox's results, and
 * what runs where the platform was started (kubectl bind, Crossplane's scale and package switch) as calls.
 *
 * Files share it: each works in namespaces and names of its own. A file that uses it with the default package holds
 * it (`holdV1`) until its last test, so the package move (`exclusive`) waits for it.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join, relative } from 'node:path';
import { inject } from 'vitest';
import { type Kube, kubeFromConfig } from '../../../harness/cluster/kube';
import { type AttachedNode, attachNode } from '../../../harness/node/attach';
import type { CrossplaneControls } from '../../../harness/platform/crossplane-switch';
import type { SandboxBackup } from '../../../sandbox/backups';
import { type ControlPlaneState, controlPlaneStateFile, type PodPlatformHandle, type Request } from './shared-platform';
import { sleep } from '../../../lib/abort';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the shared Pod platform's state appears, and the socket of its calls (shared-platform.ts). */
    podPlatform: { stateFile: string; socket: string };
  }
}

export interface PodPlatform extends PodPlatformHandle {
  readonly control: Kube;
  readonly app: Kube;
  readonly node: { readonly controlPlane: AttachedNode; readonly app: AttachedNode };
  /** The synth output that was installed, path → text (bundles left out). */
  readonly files: ReadonlyMap<string, string>;
  /** What the sandbox printed so far. */
  output(): string;
  /** kubectl bind of one more API (its plural) in the app cluster, as the sandbox bound its first two. */
  bind(resource: string): Promise<void>;
  /** The sandbox's backup step (sandbox/backups.ts): a Backup claim of its cnpg instance, Completed in the app cluster; once a run. */
  backup(): Promise<SandboxBackup>;
  readonly crossplane: CrossplaneControls;
  /** Resolves once no file of the run holds the platform with the default package any more. */
  exclusive(): Promise<void>;
}

/** How long a suite waits for the platform: a first run builds Kubernetes, images and packages. */
const START_TIMEOUT_MS = 40 * 60_000;

let platform: Promise<PodPlatform> | undefined;
let controlPlane: Promise<PodControlPlane> | undefined;

/** Keeps the platform's logs after the run if this worker used it (cluster.each.ts calls it for a failed test). */
export async function podPlatformTestFailed(): Promise<void> {
  if (platform || controlPlane) await call({ op: 'failed' }).catch(() => undefined);
}

/** The shared platform; waits for the global setup to bring it up, failing with its error and where its logs are. */
export function podPlatform(): Promise<PodPlatform> {
  platform ??= (async () => {
    const h = (await stateOf<{ handle: PodPlatformHandle }>((where) => where.stateFile)).handle;
    return {
      ...h,
      control: kubeFromConfig(readFileSync(h.kubeconfigs.controlPlane, 'utf8')),
      app: kubeFromConfig(readFileSync(h.kubeconfigs.app, 'utf8')),
      node: { controlPlane: attachNode(h.nodes.controlPlane), app: attachNode(h.nodes.app) },
      files: textFiles(h.synthDir),
      output: () => readFileSync(h.outputFile, 'utf8'),
      bind: async (resource) => void (await call({ op: 'bind', resource })),
      backup: async () => (await call({ op: 'backup' })) as SandboxBackup,
      crossplane: {
        stopCore: async () => void (await call({ op: 'stopCore' })),
        startCore: async () => void (await call({ op: 'startCore' })),
        switchConfiguration: async (files, o) => void (await call({ op: 'switchConfiguration', files: [...files], wait: o?.wait })),
      },
      exclusive: async () => void (await call({ op: 'exclusive' })),
    };
  })();
  return platform;
}

/**
 * The shared platform's control plane alone: ready before the app cluster is bound and the sandbox's claims made (about
 * a minute sooner than the whole platform), with its registry, images, synth output, OpenID provider and backend.
 */
export interface PodControlPlane extends Pick<PodPlatformHandle, 'synthDir' | 'registry' | 'images' | 'login' | 'backendUrl'> {
  readonly control: Kube;
  /** The admin's kubeconfig of the control plane (for a process of a suite's own). */
  readonly kubeconfig: string;
  readonly node: AttachedNode;
}

/** The control plane of the shared platform, as soon as it is installed (for suites that need no app cluster of it). */
export function podControlPlane(): Promise<PodControlPlane> {
  controlPlane ??= (async () => {
    const { controlPlane: cp } = await stateOf<Extract<ControlPlaneState, { controlPlane: unknown }>>((where) =>
      controlPlaneStateFile(where.stateFile),
    );
    const { kubeconfig, node, ...rest } = cp;
    return { ...rest, kubeconfig, control: kubeFromConfig(readFileSync(kubeconfig, 'utf8')), node: attachNode(node) };
  })();
  return controlPlane;
}

/**
 * Starts the platform if the global setup did not (a run it saw no Pod suite in), waits for the state file `fileOf`
 * names and returns it, or fails with the set-up's error, its log folder and the sandbox's output.
 */
async function stateOf<T extends object>(fileOf: (where: { stateFile: string }) => string): Promise<T> {
  const where = inject('podPlatform');
  if (!where) throw new Error('no shared Pod platform: this suite runs in the vitest project `cluster` (vitest.config.ts)');
  await call({ op: 'start' });
  const file = fileOf(where);
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the shared Pod platform did not start within ${START_TIMEOUT_MS / 60_000} minutes`);
    await sleep(500);
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as T | { error: string; dir: string; outputFile: string };
  if ('error' in state) {
    const out = existsSync(state.outputFile) ? readFileSync(state.outputFile, 'utf8') : '';
    throw new Error(
      `the shared Pod platform failed to start:\n${state.error}\nlogs in ${state.dir}; the sandbox's output (${state.outputFile}):\n${out}`,
    );
  }
  return state as T;
}

/**
 * Holds the platform with the default package for the file `file` (its path) until the returned function is called,
 * or the worker ends: the package move waits for it.
 */
export async function holdV1(file: string): Promise<() => void> {
  const s = await connect();
  await request(s, { op: 'hold', file });
  // Held open, but it must not keep the worker alive.
  s.unref();
  return () => s.destroy();
}

/** One request on a connection of its own; rejects with the platform's error. */
async function call(r: Request): Promise<unknown> {
  const s = await connect();
  try {
    return await request(s, r);
  } finally {
    s.destroy();
  }
}

function connect(): Promise<Socket> {
  const { socket } = inject('podPlatform');
  return new Promise((resolve, reject) => {
    const s = createConnection(socket);
    s.once('connect', () => resolve(s));
    s.once('error', (e) => reject(new Error(`cannot reach the shared Pod platform at ${socket}: ${e.message}`)));
  });
}

let ids = 0;
function request(s: Socket, r: Request): Promise<unknown> {
  const id = ++ids;
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const i = buffered.indexOf('\n');
      if (i < 0) return;
      s.off('data', onData);
      const answer = JSON.parse(buffered.slice(0, i)) as { id: number; ok: boolean; value?: unknown; error?: string };
      if (answer.ok) resolve(answer.value);
      else reject(new Error(`${r.op} on the shared Pod platform: ${answer.error}`));
    };
    s.on('data', onData);
    s.once('close', () => reject(new Error(`the shared Pod platform closed the connection during ${r.op}`)));
    s.write(`${JSON.stringify({ ...r, id })}\n`);
  });
}

/** The text files of synth output (path relative to `dir` → content), without the deployables' bundles. */
function textFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ya?ml|json|md|txt)$|Dockerfile$/.test(name)) files.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return files;
}
