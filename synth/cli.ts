/**
 * `npm run synth [-- options]`: the command-line face of `synthesize()`. scripts/synth.mjs bundles this file with
 * every module of the catalog folder and calls `main`.
 */
import { parseArgs } from 'node:util';
import type { CrossplaneTarget } from '../apis/api';
import { catalogApis, type CatalogModule } from './catalog';
import { synthesize } from './synth';

export const USAGE = `Usage: npm run synth -- [options]

Synthesizes the data-service catalog into Crossplane packages and control-plane manifests.

Options:
  --out <dir>                output folder (default: dist)
  --crossplane <v1|v2>       v1: XRDs with claims, Klutch-compatible (default); v2: namespaced v2 XRDs, no claims
  --function-package <ref>   the composition function's package reference
                             (default: xpkg.crossplane.io/klutch-kit/function-dataservices:v0.1.0)
  --catalog <dir>            folder of data-service modules (default: apis/catalog)
  --quiet                    print nothing but errors
  -h, --help                 show this help`;

export async function main(modules: readonly CatalogModule[], argv: readonly string[]): Promise<number> {
  const started = performance.now();
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      options: {
        out: { type: 'string', default: 'dist' },
        crossplane: { type: 'string', default: 'v1' },
        'function-package': { type: 'string' },
        catalog: { type: 'string' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    console.error(`synth: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.crossplane !== 'v1' && args.crossplane !== 'v2') {
    console.error(`synth: --crossplane must be v1 or v2, not "${args.crossplane}"`);
    return 2;
  }
  const log = args.quiet ? () => {} : (line: string) => console.log(line);
  try {
    const apis = catalogApis(modules);
    const result = synthesize({
      apis,
      outdir: args.out as string,
      target: args.crossplane as CrossplaneTarget,
      functionPackage: args['function-package'],
      onProgress: log,
    });
    log(`synthesized ${apis.length} APIs into ${result.files.length} files in ${Math.round(performance.now() - started)} ms`);
    return 0;
  } catch (e) {
    console.error(`synth: ${(e as Error).message}`);
    return 1;
  }
}
