/**
 * The programs `npm run synth` ships: each is one esbuild bundle for plain `node` (no node_modules) in
 * `dist/<name>/<name>.mjs`, with a Dockerfile beside it for its image. Every deployable goes through the one bundle
 * step (scripts/bundle.mjs). A part describes its own (`<part>/deploy/deployable.ts`, lib/deployable.ts); this list
 * assembles them.
 */
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_DEPLOYABLE } from '../backend/deploy/deployable';
import { CONVERSION_DEPLOYABLE } from '../conversion/deploy/deployable';
import { KUBECTL_BIND_DEPLOYABLE } from '../cli/deploy/deployable';
import { FUNCTION_DEPLOYABLE, FUNCTION_RUNTIME } from '../functions/dataservices/deploy/deployable';
import { KONNECTOR_DEPLOYABLE } from '../konnector/deploy/deployable';
import type { Deployable } from '../lib/deployable';
import { bundle } from '../scripts/bundle.mjs';
import { copyIfChanged, writeIfChanged } from '../lib/files';
import { bundledPackages, writeBundledPackages } from './bundled-packages';

export type { Deployable } from '../lib/deployable';

/** The function's runtime flags, where bench/function reads them (functions/dataservices/deploy/deployable.ts). */
export { FUNCTION_RUNTIME };

export const DEPLOYABLES: readonly Deployable[] = [
  FUNCTION_DEPLOYABLE,
  BACKEND_DEPLOYABLE,
  KONNECTOR_DEPLOYABLE,
  KUBECTL_BIND_DEPLOYABLE,
  CONVERSION_DEPLOYABLE,
];

/** The deployable of a name; an unknown name is a programming error that names the known ones. */
export function deployable(name: string): Deployable {
  const d = DEPLOYABLES.find((x) => x.name === name);
  if (!d) throw new Error(`no deployable "${name}"; synth/deployables.ts has ${DEPLOYABLES.map((x) => x.name).join(', ')}`);
  return d;
}

/** The user and group the images run as: distroless' `nonroot`, the user the Deployments' securityContext names. */
export const IMAGE_USER = 65532;

/**
 * The base image: distroless Node 24 LTS (Node 20 reached its end of life in April 2026). The bundles
 * are built for Node 22 syntax, the oldest maintained line; the tests and the sandbox run on 24 (scripts/node-runtime.mjs).
 */
export const BASE_IMAGE = 'gcr.io/distroless/nodejs24-debian12:nonroot';

/** Node inside the base image. */
const IMAGE_NODE = '/nodejs/bin/node';

/** The `entrypoint` file of a deployable with `entrypoints`: it runs the bundle with the arguments it was given. */
function entrypointScript(d: Deployable): string {
  return `#!${IMAGE_NODE}\n// Starts /${d.name}/${d.name}.mjs for manifests that name this path (synth/deployables.ts).\nimport('/${d.name}/${d.name}.mjs');\n`;
}

/**
 * The image of a deployable: its one file on distroless Node, and no shell; with `packages`, the manifests and licences
 * of the packages bundled into it (synth/bundled-packages.ts), which only scanners read.
 */
export function dockerfile(d: Deployable, packages = true): string {
  return [
    `# ${d.description}: dist/${d.name}/${d.name}.mjs on distroless Node, and no shell.`,
    ...(packages
      ? [`# node_modules/ holds the package.json and licences of the packages bundled into it, for scanners: nothing loads it.`]
      : []),
    `# Written by npm run synth (synth/deployables.ts). Build context: this folder.`,
    `#   docker build -t <registry>/<repository>:<tag> dist/${d.name}`,
    `FROM ${BASE_IMAGE}`,
    `COPY ${d.name}.mjs /${d.name}/${d.name}.mjs`,
    ...(packages ? [`COPY node_modules /${d.name}/node_modules`] : []),
    ...(d.entrypoints ?? []).map((path) => `COPY entrypoint ${path}`),
    // Numeric, so the kubelet can check runAsNonRoot against the image; the Pods run as it (Pod Security `restricted`).
    `USER ${IMAGE_USER}:${IMAGE_USER}`,
    ...Object.entries(d.runtime?.env ?? {}).map(([k, v]) => `ENV ${k}=${v}`),
    ...d.ports.map((p) => `# ${p.port}: ${p.serves}`),
    ...(d.ports.length ? [`EXPOSE ${d.ports.map((p) => p.port).join(' ')}`] : []),
    `ENTRYPOINT ${JSON.stringify([IMAGE_NODE, ...(d.runtime?.nodeOptions ?? []), `/${d.name}/${d.name}.mjs`])}`,
    '',
  ].join('\n');
}

/** A deployable's `replace` with paths from `root`. */
export function replacements(root: string, d: Deployable): Record<string, string> {
  return Object.fromEntries(Object.entries(d.replace ?? {}).map(([pkg, file]) => [pkg, join(root, file)]));
}

/**
 * Bundles a TypeScript program the tests start again and again (not shipped: the test OpenID provider) as a
 * deployable is bundled, every package inside, and returns the cached file for plain `node`: no transpiling and no
 * resolving of packages at each start (docs/decisions/test-process-starts.md).
 */
export async function bundleProgram(root: string, name: string, entry: string): Promise<string> {
  return (await bundle({ name, entry: join(root, entry), selfContained: true })).file;
}

/** Bundles a deployable (reused while its inputs are unchanged) and returns the cached file. */
export async function bundleDeployable(root: string, d: Deployable): Promise<string> {
  return (await bundleWithInputs(root, d)).file;
}

const bundleWithInputs = (root: string, d: Deployable) =>
  bundle({ name: d.name, entry: join(root, d.entry), selfContained: true, replace: replacements(root, d) });

/**
 * Writes `<out>/<name>/<name>.mjs`, its Dockerfile and its packages' manifests and licences (`node_modules/`) for
 * every deployable (each file only if it differs); returns the bundles.
 */
export async function writeDeployables(root: string, out: string, deployables = DEPLOYABLES): Promise<{ d: Deployable; file: string }[]> {
  const written = [];
  for (const d of deployables) {
    const cached = await bundleWithInputs(root, d);
    const dir = join(out, d.name);
    copyIfChanged(cached.file, join(dir, `${d.name}.mjs`));
    const packages = writeBundledPackages(bundledPackages(cached.inputs), dir);
    // A program: kubectl finds its plugin by the executable kubectl-bind on PATH (the bundle starts with `#!`).
    chmodSync(join(dir, `${d.name}.mjs`), 0o755);
    writeIfChanged(join(dir, 'Dockerfile'), dockerfile(d, packages > 0));
    if (d.entrypoints?.length) {
      writeIfChanged(join(dir, 'entrypoint'), entrypointScript(d));
      chmodSync(join(dir, 'entrypoint'), 0o755); // COPY keeps the mode: the image runs it by its shebang
    }
    written.push({ d, file: join(dir, `${d.name}.mjs`) });
  }
  return written;
}
