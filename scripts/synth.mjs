#!/usr/bin/env node
// `npm run synth`: bundles synth/cli.ts together with every module of the catalog folder (scripts/bundle.mjs) and
// runs it. The catalog is discovered here, so adding a data service is adding a file: there is no list to edit.
// The catalog modules are imported by the bundle's entry inside main()'s error handling, so a definition that throws
// while it is built prints the `synth:` line with service, field and fix, not a stack trace. The entry reads the
// arguments when it runs, so one bundle serves every command line (written into it, each new --out was a new bundle).
import { existsSync, readdirSync } from 'node:fs';
import module from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundle, REPOSITORY_ROOT } from './bundle.mjs';

const argv = process.argv.slice(2);
const i = argv.indexOf('--catalog');
const catalog = resolve(i >= 0 && argv[i + 1] ? argv[i + 1] : join(REPOSITORY_ROOT, 'apis', 'catalog'));
if (!existsSync(catalog)) {
  console.error(`synth: catalog folder ${catalog} does not exist; pass --catalog <dir> or create apis/catalog/`);
  process.exit(2);
}
const files = readdirSync(catalog)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
  .sort();
// Each module is loaded lazily (a dynamic import that esbuild still bundles), so main() can report its errors.
const contents = [
  `import { main } from ${JSON.stringify(join(REPOSITORY_ROOT, 'synth', 'cli.ts'))};`,
  `const modules = [${files.map((f) => `[${JSON.stringify(f)}, () => import(${JSON.stringify(join(catalog, f))})]`).join(', ')}];`,
  `process.exitCode = await main(modules, process.argv.slice(2), ${JSON.stringify(REPOSITORY_ROOT)});`,
].join('\n');

let out;
try {
  out = await bundle({
    name: 'synth',
    source: { contents, resolveDir: REPOSITORY_ROOT },
    // Packages inside too: one file loads in a third of the time the construct libraries' hundreds of modules took.
    selfContained: true,
    replace: {
      '@kubernetes/client-node': join(REPOSITORY_ROOT, 'synth', 'client-node-unused.ts'),
      // Its quantity parser alone, which the backend's flags read (backend/options.ts): one module that imports nothing.
      '@kubernetes/client-node/dist/util.js': join(REPOSITORY_ROOT, 'node_modules', '@kubernetes', 'client-node', 'dist', 'util.js'),
      prettier: join(REPOSITORY_ROOT, 'synth', 'prettier-unused.ts'),
    },
  });
} catch (e) {
  console.error(`synth: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
// Node 22.1 and later keep V8's compiled code of the bundle between runs (a tenth of a run on Node 24); Node 20 has not.
module.enableCompileCache?.(join(REPOSITORY_ROOT, 'node_modules', '.cache', 'klutch-kit', 'compile'));
await import(pathToFileURL(out.file).href);
