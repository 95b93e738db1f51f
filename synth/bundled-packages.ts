/**
 * The npm packages a deployable's bundle holds, as its image carries them: each package's own package.json and licence
 * files, at `/<name>/node_modules/<package>/`, the place image scanners (syft, trivy, grype) look for installed npm
 * packages. The bundle is one file, so without these an SBOM of the image names Node and the Debian packages and none
 * of the code that serves requests; and esbuild keeps no licence comments (`legalComments: 'none'`), so the licences
 * the packages ask to travel with their code travel here. Nothing loads these files: the bundle resolves nothing.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { copyIfChanged } from '../lib/files';

const NODE_MODULES = `${sep}node_modules${sep}`;
/** A package's licence and notice files, as npm packages name them. */
const LICENCE_FILE = /^(licen[sc]e|copying|notice)([.-].*)?$/i;

export interface BundledPackage {
  /** Its name and version, from its package.json. */
  readonly name: string;
  readonly version: string;
  /** Where it is installed. */
  readonly dir: string;
  /** Its folder below the outermost node_modules (`a`, `@s/a`, `a/node_modules/b`): where the image carries it. */
  readonly at: string;
}

/** The packages that files of a bundle (its inputs, absolute) come from; sorted by `at`. */
export function bundledPackages(inputs: readonly string[]): BundledPackage[] {
  const found = new Map<string, BundledPackage>();
  for (const path of inputs) {
    const first = path.indexOf(NODE_MODULES);
    if (first < 0) continue;
    const last = path.lastIndexOf(NODE_MODULES) + NODE_MODULES.length;
    const parts = path.slice(last).split(sep);
    const name = parts[0]!.startsWith('@') ? `${parts[0]}${sep}${parts[1]}` : parts[0]!;
    const dir = path.slice(0, last) + name;
    if (found.has(dir)) continue;
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) throw new Error(`${path} is bundled, but its package ${dir} has no package.json`);
    const meta = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    found.set(dir, {
      name: meta.name ?? name,
      version: meta.version ?? '',
      dir,
      at: path.slice(first + NODE_MODULES.length, last) + name,
    });
  }
  return [...found.values()].sort((a, b) => a.at.localeCompare(b.at));
}

/**
 * Writes each package's package.json and licence files below `<out>/node_modules/` (each file only if it differs) and
 * removes any other file there, a package no longer bundled; returns how many packages.
 */
export function writeBundledPackages(packages: readonly BundledPackage[], out: string): number {
  const root = join(out, 'node_modules');
  const wanted = new Map<string, string>();
  for (const p of packages)
    for (const f of readdirSync(p.dir).filter((x) => x === 'package.json' || LICENCE_FILE.test(x)))
      if (statSync(join(p.dir, f)).isFile()) wanted.set(join(root, p.at, f), join(p.dir, f));
  if (existsSync(root))
    for (const f of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      const path = join(root, f);
      if (!wanted.has(path) && statSync(path).isFile()) rmSync(path);
    }
  for (const [to, from] of wanted) copyIfChanged(from, to);
  return packages.length;
}
