/**
 * Builds Go programs from modules for the tests (crank, the Kubernetes control plane), once, into the cache.
 * A cold build can take minutes, so it reports progress; a missing or old Go fails with a message saying what to do.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cacheRoot } from './cache';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileLock } from './lock';

/** Fails unless `go` is on PATH and at least `min` (e.g. "1.24"). */
export function requireGo(min: string): void {
  const r = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new Error(
      `Go ${min} or newer is needed to build the test tools, but \`go\` was not found on PATH. ` +
        'Install Go (https://go.dev/dl/ or `apt-get install golang`) and run `npm test` again.',
    );
  }
  const have = r.stdout.trim().replace(/^go/, '');
  if (compareVersions(have, min) < 0) {
    throw new Error(`Go ${min} or newer is needed to build the test tools; found go${have}. Upgrade Go and run \`npm test\` again.`);
  }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.\-a-z]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The folder of a wrapper module of this repository (`harness/tools/kube`, `harness/tools/crank`), found upwards from this file:
 * benches and fixtures run it bundled from node_modules/.cache, where a path relative to the source would be wrong.
 */
export function wrapperModule(relative: string): string {
  const from = fileURLToPath(import.meta.url);
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, relative, 'go.mod'))) return join(dir, relative);
    if (dirname(dir) === dir) throw new Error(`cannot find ${relative}/go.mod above ${from}`);
  }
}

/**
 * A short hash of what a build reads from a wrapper module (every go.mod, go.sum and .go file, a stub module inside it
 * included): the cache key of the binary built from it, so changing a pin or a stub builds a new binary instead of
 * reusing a stale one, while editing a README does not.
 */
export function wrapperHash(moduleDir: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  for (const f of walk(moduleDir)
    .filter((f) => /(^|\/)(go\.mod|go\.sum|[^/]+\.go)$/.test(f))
    .sort()) {
    hash.update(`${relative(moduleDir, f)}\0`);
    hash.update(readFileSync(f));
  }
  return hash.digest('hex').slice(0, 10);
}

/**
 * The source folder of `module@version` in the Go module cache, downloading it if needed (resolved inside
 * `moduleDir`, so its go.sum verifies it). Tests read upstream files from there: CRDs, webhook configurations.
 */
export function goModuleSource(moduleDir: string, module: string, version: string): string {
  // `go mod download -json` takes most of a second even when the module is there; remember the answer.
  const memo = join(cacheRoot(), 'go-module-sources', `${module.replaceAll('/', '_')}@${version}`);
  if (existsSync(memo)) {
    const dir = readFileSync(memo, 'utf8');
    if (existsSync(join(dir, 'go.mod'))) return dir;
  }
  requireGo('1.24');
  const r = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], { cwd: moduleDir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cannot download the Go module ${module}@${version} (in ${moduleDir}): ${r.stderr || r.stdout}`);
  const dir = (JSON.parse(r.stdout) as { Dir: string }).Dir;
  mkdirSync(dirname(memo), { recursive: true });
  writeFileSync(memo, dir);
  return dir;
}

export interface GoBuildOptions {
  /** Folder of the wrapper module (holds go.mod and go.sum). */
  readonly moduleDir: string;
  /** Package to build, e.g. `github.com/crossplane/crossplane/cmd/crank`. */
  readonly pkg: string;
  /** Where the binary goes; the build is skipped when it exists. */
  readonly out: string;
  /** Shown in progress lines. */
  readonly label: string;
  readonly ldflags?: string;
  /** Build tags, e.g. an upstream's tags that leave out parts the tool is not used for. */
  readonly tags?: readonly string[];
  readonly minGo?: string;
  /** Extra environment of `go build`, e.g. `CGO_ENABLED: '0'` for a static binary copied into other images. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * An upstream module built with some of its files replaced or added (path in the module → contents), for an
   * upstream that needs a change on these machines; kept small and named where it is used. The build copies the module
   * from the module cache and points the wrapper's requirement at the copy (`go build -modfile` with a replace), so
   * neither the module cache nor the wrapper module changes.
   */
  readonly patch?: { readonly module: string; readonly version: string; readonly files: Readonly<Record<string, string>> };
  /** Progress lines; default stderr. */
  readonly log?: (line: string) => void;
}

/**
 * Builds `pkg` into `out` unless it is there already. Writes atomically, so an interrupted build leaves nothing; one
 * build of a binary at a time across processes (test files that run at once and need the same tool wait for the first
 * build instead of starting a second on the same cores).
 */
export async function goBuild(o: GoBuildOptions): Promise<string> {
  if (existsSync(o.out)) return o.out;
  requireGo(o.minGo ?? '1.24');
  mkdirSync(dirname(o.out), { recursive: true });
  const release = await fileLock(`${o.out}.lock`, `building ${o.label}`, o.log ?? stderrLog);
  try {
    return existsSync(o.out) ? o.out : await build(o);
  } finally {
    release();
  }
}

async function build(o: GoBuildOptions): Promise<string> {
  const tmp = `${o.out}.tmp-${process.pid}`;
  // -v names each package as it is compiled: the count is the progress shown during a cold build.
  const args = ['build', '-v', '-trimpath', '-o', tmp];
  if (o.ldflags) args.push('-ldflags', o.ldflags);
  if (o.tags?.length) args.push('-tags', o.tags.join(','));
  if (o.patch) args.push('-modfile', patchedModfile(o.moduleDir, `${tmp}-patch`, o.patch));
  args.push(o.pkg);
  const log = o.log ?? stderrLog;
  const started = Date.now();
  log(`building ${o.label} from Go modules (first run only; a cold build takes minutes) ...`);
  let packages = 0;
  let output = '';
  const tick = setInterval(
    () => log(`still building ${o.label}: ${Math.round((Date.now() - started) / 1000)}s, ${packages} packages compiled`),
    30_000,
  );
  try {
    const code = await new Promise<number>((resolve, reject) => {
      const p = spawn('go', args, { cwd: o.moduleDir, env: { ...process.env, ...o.env }, stdio: ['ignore', 'inherit', 'pipe'] });
      p.stderr.on('data', (d: Buffer) => {
        const text = d.toString();
        packages += text.split('\n').filter((l) => /^[\w.-]+(\/[\w.~+-]+)*$/.test(l.trim()) && l.trim() !== '').length;
        output = (output + text).slice(-16_000);
      });
      p.on('error', reject);
      p.on('exit', (c) => resolve(c ?? 1));
    });
    if (code !== 0) {
      throw new Error(`building ${o.label} failed (go ${args.join(' ')} in ${o.moduleDir}):\n${output.slice(-4000)}`);
    }
    renameSync(tmp, o.out);
    log(`built ${o.label} in ${Math.round((Date.now() - started) / 1000)}s: ${o.out}`);
    return o.out;
  } finally {
    clearInterval(tick);
    rmSync(tmp, { force: true });
    rmSync(`${tmp}-patch`, { recursive: true, force: true });
  }
}

/**
 * Copies `patch.module` into `dir/module`, writes the patch's files over it, and returns a go.mod that is the
 * wrapper's with a replace pointing there (its go.sum beside it, as -modfile wants).
 */
function patchedModfile(moduleDir: string, dir: string, patch: NonNullable<GoBuildOptions['patch']>): string {
  const copy = join(dir, 'module');
  cpSync(goModuleSource(moduleDir, patch.module, patch.version), copy, { recursive: true });
  // The module cache's files are read-only; the copy's must take the patch.
  spawnSync('chmod', ['-R', 'u+w', copy]);
  for (const [path, contents] of Object.entries(patch.files)) writeFileSync(join(copy, path), contents);
  const modfile = join(dir, 'go.mod');
  writeFileSync(modfile, `${readFileSync(join(moduleDir, 'go.mod'), 'utf8')}\nreplace ${patch.module} => ${copy}\n`);
  cpSync(join(moduleDir, 'go.sum'), join(dir, 'go.sum'));
  return modfile;
}

function stderrLog(line: string): void {
  process.stderr.write(`[klutch-kit] ${line}\n`);
}
