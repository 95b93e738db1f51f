// Where the tools (crank, the Kubernetes binaries, Node 24, the images) are cached between runs, one folder per tool
// and version. Plain .mjs: scripts/node-runtime.mjs needs it before anything is bundled.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `$KLUTCH_KIT_CACHE`, else `$XDG_CACHE_HOME/klutch-kit`, else `~/.cache/klutch-kit`. */
export function cacheRoot() {
  if (process.env.KLUTCH_KIT_CACHE) return process.env.KLUTCH_KIT_CACHE;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'klutch-kit');
}
