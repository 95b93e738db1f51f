/**
 * A deployable's bundle as of a git revision, for benches that compare before and after (BENCH_BASELINE) or measure
 * a committed state while the shared working tree changes under them: the revision's tree from `git archive`,
 * node_modules linked from this checkout, bundled by that revision's own bundle step (scripts/bundle.mjs: how it
 * bundled is part of what it shipped) and copied out, so nothing later written to the tree (or to the bundle cache)
 * changes the program a bench restarts.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { bundle as Bundle } from '../scripts/bundle.mjs';
import type { Deployable } from '../synth/deployables';

export interface RevisionBundleOptions {
  /** The checkout (its node_modules serve the revision). */
  readonly root: string;
  /** A git revision (`HEAD`, `8387eff^`). */
  readonly rev: string;
  readonly deployable: Deployable;
  /** Files taken from the working tree into the revision's (what a before/after keeps equal). @default none */
  readonly keep?: readonly string[];
  /** Where the bundle is copied to. */
  readonly outDir: string;
  /** The bundle's file name in `outDir`. @default `<deployable>-<rev>.mjs` */
  readonly fileName?: string;
}

/** The bundle of `deployable` at `rev`, as a file in `outDir`. */
export async function bundleAtRevision(o: RevisionBundleOptions): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-rev-'));
  try {
    const archive = spawnSync('sh', ['-c', 'git archive --format=tar "$1" | tar -x -C "$2"', 'sh', o.rev, dir], {
      cwd: o.root,
      encoding: 'utf8',
    });
    if (archive.status !== 0) throw new Error(`git revision ${o.rev}: git archive failed: ${archive.stderr}`);
    for (const f of o.keep ?? []) copyFileSync(join(o.root, f), join(dir, f));
    symlinkSync(join(o.root, 'node_modules'), join(dir, 'node_modules'));
    const name = `${o.deployable.name}-rev`;
    const { bundle } = (await import(pathToFileURL(join(dir, 'scripts', 'bundle.mjs')).href)) as { bundle: typeof Bundle };
    const built = await bundle({ name, entry: join(dir, o.deployable.entry), selfContained: true });
    const out = join(o.outDir, o.fileName ?? `${o.deployable.name}-${o.rev.replace(/[^A-Za-z0-9._-]/g, '_')}.mjs`);
    copyFileSync(built.file, out);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
