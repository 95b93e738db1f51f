#!/usr/bin/env node
// `npm run synth`: bundles synth/cli.ts together with every module of the catalog folder (esbuild, a few ms) and runs
// it. The catalog is discovered here, so adding a data service is adding a file: there is no list to edit.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const i = argv.indexOf('--catalog');
const catalog = resolve(i >= 0 && argv[i + 1] ? argv[i + 1] : join(root, 'apis', 'catalog'));
if (!existsSync(catalog)) {
  console.error(`synth: catalog folder ${catalog} does not exist; pass --catalog <dir> or create apis/catalog/`);
  process.exit(2);
}
const files = readdirSync(catalog).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts')).sort();
const entry = [
  ...files.map((f, n) => `import * as m${n} from ${JSON.stringify(join(catalog, f))};`),
  `import { main } from ${JSON.stringify(join(root, 'synth', 'cli.ts'))};`,
  `process.exitCode = await main([${files.map((f, n) => `[${JSON.stringify(f)}, m${n}]`).join(', ')}], ${JSON.stringify(argv)}, ${JSON.stringify(root)});`,
].join('\n');

// The bundle lives in node_modules/.cache so that its package imports resolve. It is keyed by the catalog folder and
// the size and mtime of every source file it can include, so an unchanged tree skips esbuild (and loading it) entirely.
const sources = ['apis', 'compositions', 'exports', 'functions', 'imports', 'synth'].map((d) => join(root, d));
const fingerprint = createHash('sha256').update(catalog).update(entry);
for (const dir of [catalog, ...sources]) {
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!f.endsWith('.ts')) continue;
    const st = statSync(join(dir, f));
    fingerprint.update(`${dir}/${f}:${st.size}:${st.mtimeMs}\n`);
  }
}
const outdir = join(root, 'node_modules', '.cache', 'klutch-kit');
const outfile = join(outdir, `synth-${fingerprint.digest('hex').slice(0, 16)}.mjs`);
if (!existsSync(outfile)) {
  mkdirSync(outdir, { recursive: true });
  const { build } = await import('esbuild');
  const tmp = `${outfile}.${process.pid}.tmp.mjs`;
  try {
    await build({
      stdin: { contents: entry, resolveDir: root, sourcefile: 'synth-entry.ts', loader: 'ts' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outfile: tmp,
      logLevel: 'error',
    });
  } catch {
    process.exit(1);
  }
  renameSync(tmp, outfile);
  // Bundles of other trees (older edits, test catalogs) are dropped after a day.
  for (const f of readdirSync(outdir).filter((x) => x.startsWith('synth-'))) {
    if (Date.now() - statSync(join(outdir, f)).mtimeMs > 86_400_000) rmSync(join(outdir, f), { force: true });
  }
}
await import(pathToFileURL(outfile).href);
