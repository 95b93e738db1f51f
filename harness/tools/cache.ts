/** Where the test tools (crank, Kubernetes binaries) are cached between runs: one folder per tool and version. */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `$KLUTCH_KIT_CACHE`, else `$XDG_CACHE_HOME/klutch-kit`, else `~/.cache/klutch-kit`. */
export function cacheRoot(): string {
  if (process.env.KLUTCH_KIT_CACHE) return process.env.KLUTCH_KIT_CACHE;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'klutch-kit');
}
