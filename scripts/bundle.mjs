// The one bundle step. Every deployable (the composition function, and every server and CLI after it) and every
// TypeScript entry run with plain node (synth, benches, test fixtures) is bundled by esbuild through `bundle()`.
//
// A bundle is cached in node_modules/.cache/klutch-kit/bundles/ (inside node_modules, so that bundles that keep their
// packages external resolve them). The cache key is what esbuild itself reports as the bundle's inputs (its
// metafile), so no list of source folders is kept by hand. A bundle is reused while every input of the repository has
// the size, mtime or, failing those, the content it had, and the package files are covered by one stamp: npm's hidden
// lockfile (node_modules/.package-lock.json), which npm rewrites whenever it changes node_modules. A deployable reads
// a thousand package files and a hundred of ours: checking those hundred, not every file, is what a cache hit costs.
// A package file edited by hand, not through npm, is not seen: delete node_modules/.cache/klutch-kit to rebuild.
// Bundles unused for a day are pruned, once per process.
//
// Plain JavaScript on purpose: scripts/synth.mjs and scripts/run-ts.mjs need it before any TypeScript is compiled.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository: above this file, which also runs bundled into a cached bundle (synth's) in node_modules/.cache. */
export const REPOSITORY_ROOT = repositoryOf(dirname(fileURLToPath(import.meta.url)));
export const CACHE_DIR = join(REPOSITORY_ROOT, 'node_modules', '.cache', 'klutch-kit', 'bundles');
const PRUNE_AFTER_MS = 86_400_000;
const NODE_MODULES = `${sep}node_modules${sep}`;
/** npm writes it on every install, update and removal (it is what npm itself trusts as the tree's state). */
const PACKAGES_STAMP = '.package-lock.json';

function repositoryOf(dir) {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'scripts', 'bundle.mjs'))) return d;
    if (dirname(d) === d) return join(dir, '..');
  }
}

/**
 * The registry a release is built for (`npm run release -- --registry`, release/main.ts): set, every bundle names its
 * images and packages there (lib/version.ts reads it as a constant esbuild defines). Read from the environment so that
 * synth's bundle and the deployables synth bundles while it runs are built for the same registry.
 */
export const RELEASE_REGISTRY_ENV = 'KLUTCH_KIT_RELEASE_REGISTRY';

/**
 * The digest of the release's konnector image (`sha256:<hex>`), once pushed: release/publish.ts builds that image first,
 * then bundles the backend and the plugin with it set, so the konnector they install is pinned (lib/version.ts).
 */
export const RELEASE_KONNECTOR_DIGEST_ENV = 'KLUTCH_KIT_RELEASE_KONNECTOR_DIGEST';

// Lets the CommonJS packages inside an ES module bundle `require` Node's built-ins.
const REQUIRE_SHIM =
  "import { createRequire as __klutchCreateRequire } from 'node:module';\nconst require = __klutchCreateRequire(import.meta.url);";

/**
 * @param {import('./bundle.d.mts').BundleOptions} o
 * @returns {Promise<import('./bundle.d.mts').Bundle>}
 */
export async function bundle(o) {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(o.name)) throw new Error(`bundle name "${o.name}" must be lower-case letters, digits and '-'`);
  if (!o.entry === !o.source) throw new Error(`bundle ${o.name}: give exactly one of entry and source`);
  const selfContained = o.selfContained ?? false;
  const entry = o.entry ? resolve(o.entry) : undefined;
  if (entry && !existsSync(entry)) throw new Error(`bundle ${o.name}: entry ${entry} does not exist`);
  const replace = Object.fromEntries(Object.entries(o.replace ?? {}).map(([pkg, file]) => [pkg, resolve(file)]));
  for (const [pkg, file] of Object.entries(replace))
    if (!existsSync(file)) throw new Error(`bundle ${o.name}: the replacement of ${pkg}, ${file}, does not exist`);
  const registry = process.env[RELEASE_REGISTRY_ENV] || undefined;
  const konnectorDigest = process.env[RELEASE_KONNECTOR_DIGEST_ENV] || undefined;
  if (konnectorDigest && !/^sha256:[0-9a-f]{64}$/.test(konnectorDigest))
    throw new Error(`${RELEASE_KONNECTOR_DIGEST_ENV}="${konnectorDigest}" is not a digest: sha256: and 64 hex digits`);
  const defines = {
    ...(registry ? { KLUTCH_KIT_RELEASE_REGISTRY: JSON.stringify(registry) } : {}),
    ...(konnectorDigest ? { KLUTCH_KIT_RELEASE_KONNECTOR_DIGEST: JSON.stringify(konnectorDigest) } : {}),
  };
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        entry,
        source: o.source,
        selfContained,
        ...(Object.keys(replace).length ? { replace } : {}),
        ...(registry ? { registry } : {}),
        ...(konnectorDigest ? { konnectorDigest } : {}),
        v: 4,
      }),
    )
    .digest('hex')
    .slice(0, 16);
  mkdirSync(CACHE_DIR, { recursive: true });
  const file = join(CACHE_DIR, `${o.name}-${key}.mjs`);
  const manifest = `${file}.inputs.json`;
  prune();
  if (fresh(manifest) && existsSync(file)) {
    const now = new Date();
    utimesSync(manifest, now, now);
    return { file, bytes: statSync(file).size, cached: true, inputs: inputsOf(manifest) };
  }
  const { build } = await import('esbuild');
  const sourcefile = `<${o.name}-entry>`;
  // Unique per call: vitest's worker threads share a pid and may bundle the same deployable at once.
  const tmp = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp.mjs`;
  let result;
  try {
    result = await build({
      ...(entry
        ? { entryPoints: [entry] }
        : {
            stdin: {
              contents: o.source.contents,
              resolveDir: resolve(o.source.resolveDir),
              sourcefile,
              loader: 'ts',
            },
          }),
      bundle: true,
      platform: 'node',
      format: 'esm',
      // The oldest maintained Node line: the images run 24, the plugin runs where the user's Node is (cli/main.ts
      // refuses an older one).
      target: 'node22',
      outfile: tmp,
      metafile: true,
      legalComments: 'none',
      // Node's own punycode is deprecated, and Node 26 says so on stderr at every start of a program that loads it
      // (node-fetch's whatwg-url, below client-node 1.x): the userland package of the same API instead.
      alias: { punycode: 'punycode/punycode.js', ...replace },
      ...(Object.keys(defines).length ? { define: defines } : {}),
      logLevel: 'silent',
      // esbuild's API runs its binary and cannot be bundled: a bundle that bundles (synth's) imports it when it runs.
      ...(selfContained ? { banner: { js: REQUIRE_SHIM }, external: ['esbuild'] } : { packages: 'external' }),
      // A program that ships: V8 keeps its whole source in memory, as UTF-16 when one character is not Latin-1 (a
      // dash in a dependency's comment): the konnector's 6 MB became 12 MiB of heap. Without comments and indentation
      // it is ASCII and half the size (7.5 MiB less RSS; docs/decisions/konnector-memory.md). Names stay as written.
      ...(selfContained ? { minifyWhitespace: true } : {}),
    });
  } catch (e) {
    rmSync(tmp, { force: true });
    const errors = e && Array.isArray(e.errors) ? e.errors : [];
    const text = errors
      .map((x) => `${x.location ? `${x.location.file}:${x.location.line}:${x.location.column}: ` : ''}${x.text}`)
      .join('\n');
    throw new Error(`cannot bundle ${o.name}: ${text || (e instanceof Error ? e.message : String(e))}`);
  }
  renameSync(tmp, file);
  // esbuild names inputs relative to its working directory; the source entry (named by `sourcefile`) is in the key.
  const paths = Object.keys(result.metafile.inputs)
    .filter((p) => p !== sourcefile)
    .map((p) => resolve(p))
    .sort();
  writeFileSync(manifest, JSON.stringify({ checks: checksOf(paths), inputs: paths.map((path) => ({ path })) }));
  return { file, bytes: statSync(file).size, cached: false, inputs: paths };
}

/** The input files a bundle's manifest records. */
function inputsOf(manifest) {
  return JSON.parse(readFileSync(manifest, 'utf8')).inputs.map((i) => i.path);
}

/**
 * The files whose fingerprints stand for the inputs: each of ours, and for the package files below a node_modules
 * with npm's lockfile, that lockfile once.
 */
function checksOf(paths) {
  const checks = new Set();
  const stamped = new Map(); // node_modules folder → whether npm's lockfile is in it
  for (const p of paths) {
    const folder = packagesOf(p);
    if (folder !== undefined && !stamped.has(folder)) stamped.set(folder, existsSync(join(folder, PACKAGES_STAMP)));
    checks.add(folder !== undefined && stamped.get(folder) ? join(folder, PACKAGES_STAMP) : p);
  }
  return [...checks].sort().map((path) => ({ path, ...fingerprint(path) }));
}

/** The (outermost) node_modules folder a package file is installed in; undefined for a file of ours. */
function packagesOf(path) {
  // A checkout may itself sit below a node_modules: its own files are never package files.
  if (path.startsWith(`${REPOSITORY_ROOT}${sep}`) && !path.startsWith(`${REPOSITORY_ROOT}${NODE_MODULES}`)) return undefined;
  const i = path.indexOf(NODE_MODULES);
  return i < 0 ? undefined : path.slice(0, i + NODE_MODULES.length);
}

/** Size and mtime, cheap to compare, and the content hash, for files touched without a change. */
function fingerprint(path) {
  const st = statSync(path);
  return { size: st.size, mtimeMs: st.mtimeMs, sha256: createHash('sha256').update(readFileSync(path)).digest('hex') };
}

/** Whether every file the manifest checks is unchanged. */
function fresh(manifest) {
  let checks;
  try {
    checks = JSON.parse(readFileSync(manifest, 'utf8')).checks;
  } catch {
    return false;
  }
  if (!Array.isArray(checks)) return false;
  for (const c of checks) {
    let st;
    try {
      st = statSync(c.path);
    } catch {
      return false;
    }
    if (st.size !== c.size) return false;
    if (st.mtimeMs !== c.mtimeMs && createHash('sha256').update(readFileSync(c.path)).digest('hex') !== c.sha256) return false;
  }
  return true;
}

let pruned = false;

/** Drops bundles whose manifest was not used for a day (other trees, older edits, test catalogs). */
function prune() {
  if (pruned) return;
  pruned = true;
  const now = Date.now();
  for (const f of readdirSync(CACHE_DIR)) {
    if (!f.endsWith('.inputs.json')) continue;
    const path = join(CACHE_DIR, f);
    try {
      if (now - statSync(path).mtimeMs > PRUNE_AFTER_MS) {
        rmSync(path, { force: true });
        rmSync(path.slice(0, -'.inputs.json'.length), { force: true });
      }
    } catch {
      // Pruned by a concurrent run.
    }
  }
}
