/**
 * kubectl-bind as a user runs it, for suites and the sandbox: the bundled plugin (dist/kubectl-bind/kubectl-bind.mjs,
 * built by the one bundle step) in a process of its own, its output captured, and the login it asks for done by a
 * real HTTP client — open the printed URL, log in at the OpenID provider, click the API's link on the backend's
 * /resources page; the backend's redirect then delivers the BindingResponse to the plugin's loopback callback.
 *
 *   const cli = await startCli(['http://127.0.0.1:8080/export', '--accept-permission-claims'], { kubeconfig: app.kubeconfig });
 *   await headlessLogin(await cli.loginUrl(), { idp, user: 'alice', resource: 'postgresqlinstances' });
 *   const { code, stdout } = await cli.done;
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { bundleDeployable, deployable } from '../../synth/deployables';
import type { BrowserRoute, Page } from '../login/browser';
import { browserFor, type FlowOptions } from './bind-flow';
import { repoRoot } from '../root';

export interface CliResult {
  /** Exit code, or undefined when a signal ended it. */
  readonly code: number | undefined;
  readonly signal: NodeJS.Signals | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRun {
  readonly child: ChildProcess;
  /** What it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the login URL once the plugin prints it; rejects if the plugin ends first. */
  loginUrl(): Promise<string>;
  /** Resolves once `text` appears on stderr (progress lines); rejects if the plugin ends first. */
  printed(text: string | RegExp): Promise<void>;
  /** Writes a line to its stdin (an answer to a prompt). */
  answer(line: string): void;
  readonly done: Promise<CliResult>;
}

export interface StartCliOptions {
  /** Kubeconfig file of the app cluster. */
  readonly kubeconfig: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Close stdin at once (no answers to give). @default false */
  readonly closeStdin?: boolean;
  /** The plugin's bundle to run (a release's `kubectl-bind.mjs`). @default this tree's, bundled */
  readonly bundle?: string;
}

/**
 * The bundled plugin (the same file `npm run synth` writes to dist/kubectl-bind/), checked once per process: checking
 * the cached bundle against its thousand-odd inputs costs about 16 ms of CPU, and a suite starts the plugin dozens of
 * times.
 */
let plugin: Promise<string> | undefined;
export function cliBundle(): Promise<string> {
  plugin ??= bundleDeployable(repoRoot(), deployable('kubectl-bind')).catch((e: unknown) => {
    plugin = undefined;
    throw e;
  });
  return plugin;
}

/** Starts `kubectl-bind <args> --kubeconfig <file>`. No browser is opened: the environment names none. */
export async function startCli(args: readonly string[], o: StartCliOptions): Promise<CliRun> {
  const bundle = o.bundle ?? (await cliBundle());
  const env: NodeJS.ProcessEnv = { ...process.env, ...o.env };
  for (const k of ['BROWSER', 'DISPLAY', 'WAYLAND_DISPLAY']) if (!o.env?.[k]) delete env[k];
  const child = spawn(process.execPath, [bundle, ...args, `--kubeconfig=${o.kubeconfig}`], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  if (o.closeStdin) child.stdin!.end();
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (c: Buffer) => ((out += c.toString()), listeners.forEach((l) => l())));
  child.stderr!.on('data', (c: Buffer) => ((err += c.toString()), listeners.forEach((l) => l())));
  const done = new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code: code ?? undefined, signal: signal ?? undefined, stdout: out, stderr: err })),
  );
  const when = <T>(what: string, find: () => T | undefined): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const v = find();
        if (v !== undefined) {
          listeners.delete(check);
          resolve(v);
        }
      };
      listeners.add(check);
      check();
      void done.then((r) => {
        if (!listeners.has(check)) return;
        listeners.delete(check);
        reject(new Error(`kubectl-bind ended (${r.code ?? r.signal}) before it printed ${what}:\n${r.stderr}${r.stdout}`));
      });
    });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    loginUrl: () => when('a login URL', () => /^\t(https?:\/\/\S+)$/m.exec(err)?.[1]),
    printed: (text) =>
      when(String(text), () => ((typeof text === 'string' ? err.includes(text) : text.test(err)) ? true : undefined)).then(() => {}),
    answer: (line) => void child.stdin!.write(`${line}\n`),
    done,
  };
}

export interface HeadlessLoginOptions {
  readonly idp: FlowOptions['idp'];
  /** Who logs in at the provider. */
  readonly user: string;
  /** The plural of the API to click on /resources. */
  readonly resource: string;
  /** CAs of HTTPS bind backends. */
  readonly ca?: readonly string[];
  /** How the browser reaches hosts inside a node's network (Browser's `route`). @default direct */
  readonly route?: BrowserRoute;
}

/**
 * What a user does with the printed URL, over plain HTTP: opens it (the backend sends the browser to the provider,
 * which logs the user in and sends it back to /resources), then follows the link of `resource` on that page. Returns
 * the last page, the plugin's callback answer; throws naming the step that went wrong.
 */
export async function headlessLogin(url: string, o: HeadlessLoginOptions): Promise<Page> {
  const browser = await browserFor(o.idp, o.user, o.ca, o.route);
  const resources = await browser.get(url);
  if (resources.status !== 200 || !new URL(resources.url).pathname.endsWith('/resources'))
    throw new Error(`the login did not reach /resources: ${resources.status} at ${resources.url}: ${resources.body.slice(0, 500)}`);
  const link = new RegExp(`<a class="bind ${o.resource}" href="([^"]+)"`).exec(resources.body)?.[1];
  if (!link) throw new Error(`the /resources page offers no ${o.resource}: ${resources.body.slice(0, 1000)}`);
  const bound = await browser.get(new URL(link.replace(/&amp;/g, '&'), resources.url).href);
  if (bound.status !== 200)
    throw new Error(`binding ${o.resource} ended at ${bound.url} with ${bound.status}: ${bound.body.slice(0, 500)}`);
  return bound;
}
