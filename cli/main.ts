#!/usr/bin/env node
/**
 * kubectl-bind, the kubectl plugin (`kubectl bind ...` runs `kubectl-bind ...` from PATH). One esbuild bundle
 * (deployable `kubectl-bind`, dist/kubectl-bind/kubectl-bind.mjs); from a checkout, scripts/kubectl-bind.mjs.
 * Ctrl-C aborts what is waiting and ends with exit code 130; a second Ctrl-C ends at once.
 */
import { processIo } from './io';
import { belowNodeFloor, MIN_NODE } from './node-floor';
import { run } from './run';
import { setUserAgent } from '../lib/user-agent';

if (belowNodeFloor(process.versions.node)) {
  process.stderr.write(
    `kubectl-bind needs Node ${MIN_NODE} or later (Node 24 LTS is what its image runs); this is Node ${process.versions.node}, past its end of life: install a maintained Node and run it again\n`,
  );
  process.exit(1);
}

setUserAgent('kubectl-bind');
const abort = new AbortController();
process.once('SIGINT', () => {
  abort.abort();
  process.once('SIGINT', () => process.exit(130));
});
process.once('SIGTERM', () => abort.abort());
const code = await run(process.argv.slice(2), processIo(abort.signal));
// Open sockets of the API clients must not keep the process alive; but what was written must reach a pipe first
// (`kubectl bind list | less`: writes to pipes are asynchronous on macOS).
await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((r) => s.write('', () => r()))));
process.exit(code);
