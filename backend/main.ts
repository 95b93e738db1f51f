/** The backend's process entry: what dist/backend/backend.mjs runs (synth/deployables.ts bundles it). */
import { hostname } from 'node:os';
import { newLogger } from '../lib/log';
import { onShutdown } from '../controller';
import { startBackend } from './app';
import { UsageError } from '../lib/flags';
import { setUserAgent } from '../lib/user-agent';
import { VERSION } from '../lib/version';
import { parseOptions, usage } from './options';

async function main(): Promise<number> {
  setUserAgent('klutch-bind-backend');
  let options;
  try {
    options = parseOptions(process.argv.slice(2), process.env, hostname());
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`backend: ${e.message}\n\n${usage()}`);
      return 2;
    }
    throw e;
  }
  if (options === 'help') {
    console.log(usage());
    return 0;
  }
  if (options === 'version') {
    console.log(VERSION);
    return 0;
  }
  const log = newLogger({ level: options.logLevel });
  for (const m of options.mapped) log.warn(m, `${m.flag} (Klutch's form) became ${m.became}; prefer ${m.prefer}`);
  const shutdown = onShutdown((name) => log.info({ signal: name }, 'shutting down: finishing requests and reconciles in flight'));
  let backend;
  try {
    backend = await startBackend(options, log);
  } catch (e) {
    log.fatal({ err: e }, 'cannot start');
    return 1;
  }
  await new Promise((resolve) => shutdown.signal.addEventListener('abort', resolve, { once: true }));
  await backend.stop();
  log.info('stopped');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
