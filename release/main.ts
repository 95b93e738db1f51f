/** `npm run release`: see RELEASE_HELP (release/flags.ts) and docs/releases.md. */
import { UsageError } from '../lib/flags';
import { parseReleaseFlags, RELEASE_HELP } from './flags';
import { publishRelease } from './publish';

async function main(argv: readonly string[]): Promise<number> {
  let flags;
  try {
    flags = parseReleaseFlags(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`release: ${e.message}\n\n${RELEASE_HELP}`);
    return 2;
  }
  if (flags === 'help') {
    console.log(RELEASE_HELP);
    return 0;
  }
  const started = Date.now();
  try {
    const r = await publishRelease(flags, (line) => console.error(line));
    console.error(
      `release ${r.version} published (${r.registry.images}, ${r.registry.packages}) in ${((Date.now() - started) / 1000).toFixed(0)}s: ` +
        `${Object.keys(r.images).length} images, ${Object.keys(r.packages).length} packages, the chart, ` +
        `${r.executables.length} executables, ${r.sboms.length} SBOMs; written to ${flags.out} (install: docs/releases.md)`,
    );
    return 0;
  } catch (e) {
    console.error(`release: ${(e as Error).message}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
