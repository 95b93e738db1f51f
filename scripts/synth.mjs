#!/usr/bin/env node
// `npm run synth`: bundles synth/cli.ts together with every module of the catalog folder (esbuild, a few ms) and runs
// it. The catalog is discovered here, so adding a data service is adding a file: there is no list to edit.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

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
  `process.exitCode = await main([${files.map((f, n) => `[${JSON.stringify(f)}, m${n}]`).join(', ')}], ${JSON.stringify(argv)});`,
].join('\n');

// The bundle lives in node_modules/.cache so that its package imports resolve; one file per catalog folder.
const outdir = join(root, 'node_modules', '.cache', 'klutch-kit');
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, `synth-${createHash('sha256').update(catalog).digest('hex').slice(0, 12)}.mjs`);
try {
  await build({
    stdin: { contents: entry, resolveDir: root, sourcefile: 'synth-entry.ts', loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'error',
  });
} catch {
  process.exit(1);
}
await import(pathToFileURL(outfile).href);
