/**
 * The earlier output `npm run synth -- --against <git ref or dist folder>` compares with: the XRDs of a synth output
 * folder, or of the catalog at a git ref, synthesized in a throwaway copy of that commit with this checkout's
 * node_modules (a ref whose dependencies differ: synthesize it in a checkout of its own and pass its folder).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { XrdLike } from './breaking';
import { PACKAGE_DIR } from './synth';

/** The XRDs among rendered files (path below the output folder → YAML). */
export function xrdsOf(files: ReadonlyMap<string, string>): XrdLike[] {
  const out: XrdLike[] = [];
  for (const [path, text] of files)
    if (path.startsWith(`${PACKAGE_DIR}/apis/`) && path.endsWith('/definition.yaml'))
      for (const d of parseAllDocuments(text)) out.push(d.toJS() as XrdLike);
  return out;
}

/** The XRDs of a synth output folder, read as `xrdsOf` reads rendered ones. */
function xrdsInFolder(dir: string): XrdLike[] {
  const apis = join(dir, PACKAGE_DIR, 'apis');
  if (!existsSync(apis))
    throw new Error(`--against ${dir}: no ${join(PACKAGE_DIR, 'apis')} in it; pass the folder a synth run wrote (--out), or a git ref`);
  const files = new Map<string, string>();
  for (const name of readdirSync(apis)) {
    const file = join(apis, name, 'definition.yaml');
    if (existsSync(file)) files.set(`${PACKAGE_DIR}/apis/${name}/definition.yaml`, readFileSync(file, 'utf8'));
  }
  return xrdsOf(files);
}

export interface AgainstOptions {
  /** The repository this synth runs from. */
  readonly root: string;
  /** The catalog folder this run reads: the same folder is read at the ref. */
  readonly catalog: string;
  /** Options the earlier output is synthesized with (`--crossplane`), as this run's. */
  readonly args: readonly string[];
  readonly log: (line: string) => void;
}

/** The earlier XRDs: of `against` as a folder if one exists, else of the catalog at `against` as a git ref. */
export function earlierXrds(against: string, o: AgainstOptions): XrdLike[] {
  if (existsSync(against) && statSync(against).isDirectory()) return xrdsInFolder(against);
  const git = (...args: string[]) => spawnSync('git', ['-C', o.root, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const commit = git('rev-parse', '--verify', '--quiet', `${against}^{commit}`).stdout?.trim();
  if (!commit)
    throw new Error(`--against ${against}: neither a folder nor a commit of the repository at ${o.root}; pass a dist folder or a git ref`);
  const catalog = relative(o.root, resolve(o.catalog));
  if (catalog.startsWith('..'))
    throw new Error(
      `--against ${against}: the catalog ${o.catalog} is outside the repository, so the ref does not have it; pass an earlier output folder`,
    );
  const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-against-'));
  try {
    o.log(`--against ${against}: synthesizing ${catalog} at ${commit.slice(0, 12)} to compare with`);
    const archive = spawnSync('sh', ['-c', `git -C "$0" archive "$1" | tar -x -C "$2"`, o.root, commit, tmp], { encoding: 'utf8' });
    if (archive.status !== 0) throw new Error(`--against ${against}: git archive ${commit} failed: ${archive.stderr.trim()}`);
    symlinkSync(join(o.root, 'node_modules'), join(tmp, 'node_modules'));
    const out = join(tmp, 'dist');
    const synth = spawnSync(
      process.execPath,
      [join(tmp, 'scripts', 'synth.mjs'), ...o.args, '--catalog', join(tmp, catalog), '--out', out, '--quiet'],
      {
        cwd: tmp,
        encoding: 'utf8',
      },
    );
    if (synth.status !== 0)
      throw new Error(
        `--against ${against}: synthesizing ${commit.slice(0, 12)} failed (it runs with this checkout's node_modules; synthesize it in a checkout of its own and pass its output folder): ${synth.stderr.trim()}`,
      );
    return xrdsInFolder(out);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
