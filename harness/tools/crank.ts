/**
 * The real Crossplane CLI (`crank`), built from Go modules into the cache, and helpers to run it offline.
 *
 * Two lines, chosen per suite: `v1` (v1.20.11, the last 1.x line; the default package's claims and XRDs) and `v2`
 * (v2.2.1, the last github.com/crossplane/crossplane/v2 with the CLI in it, harness/tools/crossplane-lines.ts; the
 * `--crossplane v2` output's namespaced XRs). `render` (Development runtime) and `beta validate` are the same commands in both.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { cacheRoot } from './cache';
import { goBuild, goModuleSource, wrapperModule } from './go';
import { CROSSPLANE_LINES, type CrossplaneLine } from './crossplane-lines';
import { releasePackage } from '../../lib/version';

export type CrankLine = CrossplaneLine;

const LINES = CROSSPLANE_LINES;

/** The crank version of a line. */
const crankVersion = (line: CrankLine = 'v1'): string => LINES[line].crankVersion;
/** The v1 crank version (the line most suites use). */
export const CRANK_VERSION = crankVersion('v1');
/** The image `crank beta validate` adds to its dependencies; we seed its cache so it never downloads it. */
const crossplaneImage = (line: CrankLine = 'v1'): string => `xpkg.crossplane.io/crossplane/crossplane:${crankVersion(line)}`;

/** The Go module source of a line's Crossplane (its CRDs under cluster/crds), downloaded if needed. */
function crankSource(line: CrankLine = 'v1'): string {
  const l = LINES[line];
  return goModuleSource(wrapperModule(l.crankWrapper), l.module, l.crankVersion);
}

/** Path of the crank binary of a line, building it first if needed. */
export async function ensureCrank(line: CrankLine = 'v1'): Promise<string> {
  const l = LINES[line];
  return goBuild({
    moduleDir: wrapperModule(l.crankWrapper),
    pkg: `${l.module}/cmd/crank`,
    out: join(cacheRoot(), `crank-${l.crankVersion}`, 'crank'),
    label: `crank ${l.crankVersion}`,
    ldflags: `-X ${l.module}/internal/version.version=${l.crankVersion}`,
  });
}

/**
 * A `--cache-dir` for `crank beta validate` of a line that already holds that Crossplane's own CRDs (taken from its
 * Go module), so validation runs offline.
 */
export function ensureValidateCache(line: CrankLine = 'v1'): string {
  const dir = join(cacheRoot(), `crank-${crankVersion(line)}`, 'validate-cache');
  const pkg = join(dir, crossplaneImage(line).replaceAll(':', '@'), 'package.yaml');
  if (existsSync(pkg)) return dir;
  const crds = join(crankSource(line), 'cluster', 'crds');
  const docs = readdirSync(crds)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => readFileSync(join(crds, f), 'utf8').replace(/^---\n/, ''));
  mkdirSync(dirname(pkg), { recursive: true });
  writeFileSync(pkg, docs.map((d) => `---\n${d}`).join('\n'));
  return dir;
}

export interface CrankResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs crank synchronously with the given arguments. */
export function crank(bin: string, args: readonly string[], opts: { cwd?: string; input?: string } = {}): CrankResult {
  const r = spawnSync(bin, args, { encoding: 'utf8', cwd: opts.cwd, input: opts.input, maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `crank beta validate <extensions> <resources>` offline with the binary of `line` (default v1); `status` 0 means
 * every resource is valid.
 */
export function crankValidate(bin: string, extensions: string, resources: string, line: CrankLine = 'v1'): CrankResult {
  return crank(bin, [
    'beta',
    'validate',
    extensions,
    resources,
    '--cache-dir',
    ensureValidateCache(line),
    '--crossplane-image',
    crossplaneImage(line),
    '--error-on-missing-schemas',
  ]);
}

export interface RenderOptions {
  /** The composite resource (an XR, as Crossplane makes it of a claim). */
  readonly composite: Record<string, unknown>;
  /** The Composition, as YAML (what synth wrote). */
  readonly composition: string;
  /** The port of a function process serving without TLS (`--insecure`), rendered with the Development runtime. */
  readonly functionPort: number;
  /** Observed composed resources (`-o`), for the passes after the first. */
  readonly observed?: readonly Record<string, unknown>[];
  /** A scratch folder for the files crank reads. */
  readonly dir: string;
  /** The XRD, as YAML: crank v2 defaults the composite from its schema first, as the API server would (`--xrd`). */
  readonly xrd?: string;
  /** What Crossplane would find for the function's requirements (`-e`: extra resources on v1, required on v2). */
  readonly extraResources?: readonly Record<string, unknown>[];
}

/**
 * `crank render` of one composite through a Composition whose step calls a running function (the Development
 * runtime, no Docker): the documents crank prints (the XR, the composed resources, `-r` results). Throws with
 * crank's stderr when it fails.
 */
export function crankRender(bin: string, o: RenderOptions): Record<string, unknown>[] {
  mkdirSync(o.dir, { recursive: true });
  const write = (name: string, content: string) => {
    const path = join(o.dir, name);
    writeFileSync(path, content);
    return path;
  };
  // JSON documents: Go's YAML 1.1 reader would turn an unquoted `on` written by a YAML 1.2 writer into true.
  const yaml = (docs: readonly unknown[]) => docs.map((d) => `---\n${JSON.stringify(d)}\n`).join('');
  const composition = parse(o.composition) as { spec: { pipeline: { functionRef: { name: string } }[] } };
  const functions = {
    apiVersion: 'pkg.crossplane.io/v1beta1',
    kind: 'Function',
    metadata: {
      name: composition.spec.pipeline[0]?.functionRef.name,
      annotations: {
        'render.crossplane.io/runtime': 'Development',
        'render.crossplane.io/runtime-development-target': `dns:///127.0.0.1:${o.functionPort}`,
      },
    },
    spec: { package: releasePackage('function-dataservices') },
  };
  const args = [
    'render',
    write('xr.yaml', yaml([o.composite])),
    write('composition.yaml', o.composition),
    write('functions.yaml', yaml([functions])),
    '-r',
  ];
  if (o.observed) args.push('-o', write('observed.yaml', yaml(o.observed)));
  if (o.xrd) args.push('--xrd', write('xrd.yaml', o.xrd));
  if (o.extraResources) args.push('-e', write('extra.yaml', yaml(o.extraResources)));
  const r = crank(bin, args);
  if (r.status !== 0) throw new Error(`crank render failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((d): d is Record<string, unknown> => d !== null);
}
