#!/usr/bin/env node
// kubectl-bind from a checkout: the package's `bin` (`npm link` puts it on PATH, so `kubectl bind` finds it). It
// bundles cli/main.ts through the one bundle step (scripts/bundle.mjs, cached: the same self-contained file as the
// deployable `kubectl-bind` that `npm run synth` writes to dist/kubectl-bind/) and runs it.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundle, REPOSITORY_ROOT } from './bundle.mjs';

let out;
try {
  out = await bundle({ name: 'kubectl-bind', entry: join(REPOSITORY_ROOT, 'cli', 'main.ts'), selfContained: true });
} catch (e) {
  console.error(`kubectl-bind: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
await import(pathToFileURL(out.file).href);
