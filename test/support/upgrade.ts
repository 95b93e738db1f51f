/**
 * The steps of docs/upgrading.md, run with the real kubectl as an operator types them, against the sandbox's
 * platform: the control plane (its kustomize overlay pointed at the next release, applied; the backend's rollout; the
 * Configuration's package), then an app cluster's konnector (the release's manifest applied; its rollout). Each step
 * says how long it took.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parse, stringify } from 'yaml';
import { runCommand } from '../../harness/cluster/processes';
import { CONFIGURATION_NAME } from '../../harness/crossplane/crossplane';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { eventually, getObject, type Kube } from '../../harness/cluster/kube';
import { RELEASE_PACKAGES } from '../../release/references';
import type { NextRelease } from './next-release';

/** `kubectl --kubeconfig=<kubeconfig> <args>`; throws with its output when it fails. */
async function kubectl(kubeconfig: string, args: readonly string[]): Promise<string> {
  const r = await runCommand(kubeBinaryPath(), ['kubectl', `--kubeconfig=${kubeconfig}`, ...args], { timeoutMs: 360_000 });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.output}`);
  return r.output;
}

/**
 * Points the overlay's `resources` and `components` at the same folders of `release` (they name a release's
 * `control-plane` and its Components by relative paths).
 */
function repoint(overlay: string, release: string): void {
  const file = join(overlay, 'kustomization.yaml');
  const k = parse(readFileSync(file, 'utf8')) as { resources?: string[]; components?: string[] };
  const moved = (p: string) => {
    const at = p.indexOf('control-plane');
    if (at < 0) throw new Error(`${file}: ${p} is not a folder of a release's control-plane`);
    return relative(overlay, join(release, p.slice(at)));
  };
  writeFileSync(file, stringify({ ...k, resources: (k.resources ?? []).map(moved), components: (k.components ?? []).map(moved) }));
}

/** docs/upgrading.md, "The control plane": apply the overlay on the next release, roll the backend, move the Configuration. */
export async function upgradeControlPlane(o: {
  readonly kubeconfig: string;
  readonly kube: Kube;
  /** The operator's overlay of the install bundle (its kustomization.yaml names the release). */
  readonly overlay: string;
  readonly release: NextRelease;
  readonly log: (line: string) => void;
}): Promise<void> {
  const step = async (what: string, f: () => Promise<unknown>) => {
    const t = Date.now();
    await f();
    o.log(`upgrade: ${what} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  repoint(o.overlay, o.release.dir);
  await step('kubectl apply -k (the overlay on the next release)', () =>
    kubectl(o.kubeconfig, ['apply', '-k', o.overlay, '--server-side', '--force-conflicts']),
  );
  await step("the backend's rollout", () =>
    kubectl(o.kubeconfig, ['-n', 'klutch-bind-backend', 'rollout', 'status', 'deployment/klutch-bind-backend', '--timeout=5m']),
  );
  const pkg = o.release.record.packages[RELEASE_PACKAGES.configuration]!.ref;
  await step(`the Configuration moved to ${pkg}`, async () => {
    await kubectl(o.kubeconfig, [
      'patch',
      `configuration.pkg.crossplane.io/${CONFIGURATION_NAME}`,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { package: pkg } }),
    ]);
    // Healthy on its new revision: the package's path at whichever registry the platform pulls it from.
    const path = pkg.slice(pkg.indexOf('/'));
    await eventually(
      `Configuration ${CONFIGURATION_NAME} Healthy on ${pkg}`,
      async () => {
        const c = await getObject(o.kube, `/apis/pkg.crossplane.io/v1/configurations/${CONFIGURATION_NAME}`);
        const healthy = (c?.status?.conditions ?? []).some(
          (x: { type: string; status: string }) => x.type === 'Healthy' && x.status === 'True',
        );
        return String(c?.status?.resolvedPackage ?? '').endsWith(path) && healthy ? c : undefined;
      },
      300_000,
    );
  });
}

/** docs/upgrading.md, "App clusters": the next release's konnector manifest applied, its rollout. */
export async function upgradeKonnector(o: {
  readonly kubeconfig: string;
  readonly release: NextRelease;
  readonly log: (line: string) => void;
}): Promise<void> {
  const t = Date.now();
  const manifest = join(o.release.dir, 'app-cluster', 'konnector', 'konnector.yaml');
  await kubectl(o.kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', manifest]);
  await kubectl(o.kubeconfig, ['-n', 'klutch-bind', 'rollout', 'status', 'deployment/konnector', '--timeout=3m']);
  o.log(
    `upgrade: the app cluster's konnector (${relative(dirname(o.release.dir), manifest)}) rolled out in ${((Date.now() - t) / 1000).toFixed(1)} s`,
  );
}
