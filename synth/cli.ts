/**
 * `npm run synth [-- options]`: the command-line face of `synthesize()`. scripts/synth.mjs bundles this file with
 * every module of the catalog folder and calls `main`.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildFunctionBundle } from '../functions/dataservices/build';
import type { CrossplaneTarget } from '../apis/api';
import { catalogApis, type CatalogModule } from './catalog';
import type { PackageDependency } from './package-meta';
import { DEFAULT_PROVIDER_ANYNINES, DEFAULT_PROVIDER_KUBERNETES, synthesize } from './synth';

export const USAGE = `Usage: npm run synth -- [options]

Synthesizes the data-service catalog into Crossplane packages and control-plane manifests.

Options:
  --out <dir>                output folder (default: dist)
  --crossplane <v1|v2>       v1: XRDs with claims, Klutch-compatible (default); v2: namespaced v2 XRDs, no claims
  --function-package <ref>   the composition function's package reference
                             (default: xpkg.crossplane.io/klutch-kit/function-dataservices:v0.1.0)
  --provider-anynines <package>@<constraint>
                             provider the a9s Compositions need
                             (default: xpkg.upbound.io/anynines/provider-anynines@>=v1.5.0)
  --provider-kubernetes <package>@<constraint>
                             provider the a8s Compositions need
                             (default: xpkg.crossplane.io/crossplane-contrib/provider-kubernetes@>=v0.18.0)
  --catalog <dir>            folder of data-service modules (default: apis/catalog)
  --quiet                    print nothing but errors
  -h, --help                 show this help`;

/** `root` is the repository (where functions/ lives); scripts/synth.mjs passes it. */
export async function main(modules: readonly CatalogModule[], argv: readonly string[], root: string): Promise<number> {
  const started = performance.now();
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      options: {
        out: { type: 'string', default: 'dist' },
        crossplane: { type: 'string', default: 'v1' },
        'function-package': { type: 'string' },
        'provider-anynines': { type: 'string' },
        'provider-kubernetes': { type: 'string' },
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
  let providers;
  try {
    providers = {
      providerAnynines: dependency('--provider-anynines', args['provider-anynines'], DEFAULT_PROVIDER_ANYNINES),
      providerKubernetes: dependency('--provider-kubernetes', args['provider-kubernetes'], DEFAULT_PROVIDER_KUBERNETES),
    };
  } catch (e) {
    console.error(`synth: ${(e as Error).message}`);
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
      ...providers,
      onProgress: log,
    });
    const bundle = await functionBundle(root, args.out as string);
    log(`${bundle}: the composition function, one file for plain node (build its image with the Dockerfile beside it)`);
    log(`synthesized ${apis.length} APIs into ${result.files.length} files in ${Math.round(performance.now() - started)} ms`);
    return 0;
  } catch (e) {
    console.error(`synth: ${(e as Error).message}`);
    return 1;
  }
}

/** `<package>@<constraint>` (split at the last `@`, so a digest-free reference never confuses it), or the default. */
function dependency(option: string, value: string | undefined, fallback: PackageDependency): PackageDependency {
  if (value === undefined) return fallback;
  const at = value.lastIndexOf('@');
  const pkg = at > 0 ? value.slice(0, at) : '';
  const version = at > 0 ? value.slice(at + 1) : '';
  if (!pkg || !version || /\s|:/.test(pkg.split('/').pop() ?? '')) {
    throw new Error(`${option} must be <package>@<version constraint>, e.g. ${fallback.package}@${fallback.version}; got "${value}"`);
  }
  return { package: pkg, version };
}

/**
 * Writes `<out>/function/function.mjs` (the function bundled by esbuild) and its Dockerfile. The bundle is cached in
 * node_modules/.cache by the size and mtime of every source it can include, so an unchanged tree costs a copy.
 */
async function functionBundle(root: string, out: string): Promise<string> {
  const fingerprint = createHash('sha256');
  for (const dir of ['functions', 'apis'].map((d) => join(root, d))) {
    for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
      if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
      const st = statSync(join(dir, f));
      fingerprint.update(`${dir}/${f}:${st.size}:${st.mtimeMs}\n`);
    }
  }
  const cache = join(root, 'node_modules', '.cache', 'klutch-kit');
  const cached = join(cache, `function-${fingerprint.digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(cached)) {
    const tmp = `${cached}.${process.pid}.tmp.mjs`;
    await buildFunctionBundle(tmp, { sourceDir: join(root, 'functions', 'dataservices') });
    renameSync(tmp, cached);
  }
  const dir = join(out, 'function');
  mkdirSync(dir, { recursive: true });
  copyFileSync(cached, join(dir, 'function.mjs'));
  copyFileSync(join(root, 'functions', 'dataservices', 'Dockerfile'), join(dir, 'Dockerfile'));
  return join(dir, 'function.mjs');
}
