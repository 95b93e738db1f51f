/**
 * `npm run synth [-- options]`: the command-line face of `synthesize()`. scripts/synth.mjs bundles this file with
 * every module of the catalog folder and calls `main`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CrossplaneTarget } from '../apis/api';
import { catalogApis, type CatalogModule } from './catalog';
import { writeDeployables } from './deployables';
import { writeKrewPackage } from '../cli/deploy/krew';
import type { PackageDependency } from './package-meta';
import {
  DEFAULT_PROVIDER_ANYNINES,
  DEFAULT_PROVIDER_KUBERNETES,
  DEFAULT_PROVIDER_KUBERNETES_V2,
  render,
  synthesize,
  type SynthOptions,
} from './synth';
import { claimTypeFiles, SCHEMAS_DIR } from './claim-schemas';
import { YamlMemo } from './yaml-memo';
import { earlierXrds, xrdsOf, type AgainstOptions } from './against';
import { breakingChanges, formatBreak } from './breaking';
import { labelProblem } from '../lib/labels';
import { DEFAULT_FUNCTION_PACKAGE } from '../compositions/function-ref';

export const USAGE = `Usage: npm run synth -- [options]

Synthesizes the data-service catalog into Crossplane packages and control-plane manifests.

Options:
  --out <dir>                output folder (default: dist)
  --crossplane <v1|v2>       v1: XRDs with claims, Klutch-compatible (default); v2: namespaced v2 XRDs, no claims
  --function-package <ref>   the composition function's package reference
                             (default: ${DEFAULT_FUNCTION_PACKAGE})
  --provider-anynines <package>@<constraint>
                             provider the a9s Compositions need
                             (default: xpkg.upbound.io/anynines/provider-anynines@">=v1.5.0, <v2.0.0")
  --provider-kubernetes <package>@<constraint>
                             provider the a8s Compositions need
                             (default: xpkg.crossplane.io/crossplane-contrib/provider-kubernetes@">=v0.18.0, <v2.0.0";
                             with --crossplane v2 @">=v1.0.0, <v2.0.0", for its namespaced Object)
  --setting <name>=<value>   a platform setting the backends read; repeat for several:
                               a9s.organizationGuid, a9s.spaceGuid  the Cloud Foundry org and space
                                                                    of every a9s instance
                             (default: the pair Klutch hard-codes; set your platform's)
                               cnpg.image.<service>                 the PostgreSQL image CloudNativePG runs
                                                                    for a service version, e.g.
                                                                    cnpg.image.a9s-postgresql15=<image>@sha256:...
                             (default: the catalog's image of that version)
  --monitoring-label <key>=<value>
                             a label on the PrometheusRules, ServiceMonitor and PodMonitors, as the Prometheus
                             Operator's selectors want it (kube-prometheus-stack: release=<its release name>);
                             repeat for several (default: none)
  --monitoring-namespace <ns>
                             Prometheus' namespace, to which the monitoring NetworkPolicies open the metrics ports
                             (default: monitoring)
  --krew-uri <url>           where kubectl-bind/krew/kubectl-bind.tar.gz will be downloaded from; written into
                             the krew manifests kubectl-bind/krew/bind.yaml and klutch-bind.yaml
                             (default: the project's release URL for this version)
  --conversion-ca <file>     the PEM CA of the conversion server's serving certificate; required when an API of
                             the catalog has previousVersions (its XRD then names the server's Service
                             crossplane-system/klutch-kit-conversion as its conversion webhook)
  --catalog <dir>            folder of data-service modules (default: apis/catalog)
  --against <ref|dir>        refuse, before writing anything, a change to an API that would break claims
                             already stored: compared with the XRDs of an earlier output folder, or of the
                             catalog at a git ref (synthesized with the same --crossplane)
  --quiet                    print nothing but errors
  -h, --help                 show this help`;

/** The PEM CA of --conversion-ca: a file that holds no certificate is named. */
function readConversionCa(file: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`--conversion-ca ${file}: ${(e as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`--conversion-ca ${file}: holds no PEM certificate; give the CA that signed the conversion server's certificate`);
  return pem;
}

/** A catalog module not loaded yet: its file name and how to import it. */
export type LazyCatalogModule = readonly [file: string, load: () => Promise<Record<string, unknown>>];

/**
 * `root` is the repository (where the deployables' sources live); scripts/synth.mjs passes it. The catalog modules
 * are imported here, inside the error handling, so a definition that throws as it is built is reported as one line.
 */
export async function main(modules: readonly LazyCatalogModule[], argv: readonly string[], root: string): Promise<number> {
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
        setting: { type: 'string', multiple: true },
        'monitoring-label': { type: 'string', multiple: true },
        'monitoring-namespace': { type: 'string' },
        catalog: { type: 'string' },
        against: { type: 'string' },
        'conversion-ca': { type: 'string' },
        'krew-uri': { type: 'string' },
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
      providerKubernetes: dependency(
        '--provider-kubernetes',
        args['provider-kubernetes'],
        args.crossplane === 'v2' ? DEFAULT_PROVIDER_KUBERNETES_V2 : DEFAULT_PROVIDER_KUBERNETES,
      ),
    };
  } catch (e) {
    console.error(`synth: ${(e as Error).message}`);
    return 2;
  }
  let settings: Record<string, string>;
  let monitoringLabels: Record<string, string>;
  try {
    settings = parseSettings(args.setting ?? []);
    monitoringLabels = parseLabels('--monitoring-label', args['monitoring-label'] ?? []);
    const ns = args['monitoring-namespace'];
    if (ns !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns))
      throw new Error(`--monitoring-namespace "${ns}" is not a namespace name (a DNS label: lower-case letters, digits and "-")`);
  } catch (e) {
    console.error(`synth: ${(e as Error).message}`);
    return 2;
  }
  const log = args.quiet ? () => {} : (line: string) => console.log(line);
  try {
    const loaded: CatalogModule[] = [];
    for (const [file, load] of modules) loaded.push([file, await load()]);
    const apis = catalogApis(loaded);
    // What a run reuses from the last (the YAML of unchanged objects and CRDs, the krew archive of an unchanged bundle).
    const cache = join(root, 'node_modules', '.cache', 'klutch-kit');
    const yaml = new YamlMemo(join(cache, 'synth-yaml.json'));
    const options: SynthOptions = {
      apis,
      outdir: args.out as string,
      target: args.crossplane as CrossplaneTarget,
      functionPackage: args['function-package'],
      ...providers,
      settings,
      monitoringLabels,
      ...(args['monitoring-namespace'] !== undefined ? { monitoringNamespace: args['monitoring-namespace'] } : {}),
      onProgress: log,
      ...(args['conversion-ca'] !== undefined ? { conversion: { caBundle: readConversionCa(args['conversion-ca']) } } : {}),
      schemas: join(root, 'schemas'),
      yaml,
      ...(args.against !== undefined
        ? {
            check: guard(args.against, {
              root,
              catalog: args.catalog ?? join(root, 'apis', 'catalog'),
              args: ['--crossplane', args.crossplane],
              log,
            }),
          }
        : {}),
    };
    const files = render(options);
    const schemas = new Map([...files].filter(([path]) => path.startsWith(`${SCHEMAS_DIR}/`)));
    for (const [path, ts] of await claimTypeFiles(schemas)) files.set(path, ts);
    const result = synthesize(options, files);
    yaml.save();
    for (const { d, file } of await writeDeployables(root, args.out as string)) {
      log(`${file}: ${d.description}, one file for plain node (build its image with the Dockerfile beside it)`);
      if (d.name === 'kubectl-bind') {
        const krew = await writeKrewPackage(args.out as string, {
          bundle: file,
          license: join(root, 'LICENSE'),
          uri: args['krew-uri'],
          cache: join(cache, 'krew'),
        });
        log(`${krew.manifest}, ${krew.secondManifest}: the krew manifests of ${krew.archive} (sha256 ${krew.sha256})`);
      }
    }
    log(`synthesized ${apis.length} APIs into ${result.files.length} files in ${Math.round(performance.now() - started)} ms`);
    return 0;
  } catch (e) {
    console.error(`synth: ${(e as Error).message}`);
    return 1;
  }
}

/** The breaking-change guard: throws, with one line per break, when the rendered XRDs narrow the earlier ones. */
function guard(against: string, o: AgainstOptions): (files: ReadonlyMap<string, string>) => void {
  return (files) => {
    const before = earlierXrds(against, o);
    const breaks = breakingChanges(before, xrdsOf(files));
    if (breaks.length > 0)
      throw new Error(
        `${breaks.length} change(s) would break claims already stored (compared with ${against}); nothing was written:\n${breaks.map((b) => `  ${formatBreak(b)}`).join('\n')}`,
      );
    o.log(`--against ${against}: ${before.length} APIs compared, no breaking change`);
  };
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

/** `<option> key=value` options, each key once, each a label the API server takes. */
export function parseLabels(option: string, values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new Error(`${option} must be <key>=<value>, e.g. release=kube-prometheus-stack; got "${v}"`);
    const [key, value] = [v.slice(0, eq), v.slice(eq + 1)];
    const problem = labelProblem(key, value);
    if (problem) throw new Error(`${option} ${v}: ${problem}`);
    if (key in out) throw new Error(`${option} ${key} is given twice; give it once`);
    out[key] = value;
  }
  return out;
}

/** `--setting name=value` options, each name once, names as the backends spell them (`a9s.spaceGuid`). */
export function parseSettings(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    const name = eq > 0 ? v.slice(0, eq) : '';
    // <backend>.<name>, and for a setting per key of a map (cnpg.image.<service>) the key after one more dot.
    if (!/^[a-z0-9-]+\.[A-Za-z][A-Za-z0-9]*(\.[a-z0-9][a-z0-9.-]*)?$/.test(name) || eq === v.length - 1) {
      throw new Error(`--setting must be <backend>.<name>=<value>, e.g. a9s.spaceGuid=6e5c...; got "${v}"`);
    }
    if (name in out) throw new Error(`--setting ${name} is given twice; give it once`);
    out[name] = v.slice(eq + 1);
  }
  return out;
}
