/**
 * A release as an operator makes it (issue 37, item 2): `npm run release` run as a command against the run's registry
 * (the shared platform's), then what it published used from the registry alone: the files checked against
 * SHA256SUMS with sha256sum, every image of images.txt run as a Pod the kubelet pulls by its digest, the chart pulled
 * over OCI by the real helm, the Function package installed by Crossplane by the digest the bundle names, and the
 * Configuration, as pulled, depending on that digest. The release's names are the
 * ones the node pulls (`<registry.host>/release-test`); this process pushes through its forward (`--push-registry`).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../harness/root';
import { runCommand } from '../../harness/cluster/processes';
import { applyAt, type Kube, type WireObject } from '../../harness/cluster/kube';
import { ensureHelm } from '../../harness/tools/helm';
import { ensurePrograms } from '../../harness/tools/programs';
import { debianVersions } from '../../harness/tools/debian';
import { NODE_VERSION } from '../../harness/tools/node-runtime';
import { KUBE_VERSION, kubeBinaryPath } from '../../harness/tools/kube';
import { packageHealthy } from '../../harness/platform/crossplane-deployed';
import type { AttachedNode } from '../../harness/node/attach';
import { imageRepository } from '../../lib/image-reference';
import { VERSION } from '../../lib/version';
import type { ReleaseRecord } from '../../release/publish';
import { CHART_REPOSITORY, RELEASE_IMAGES, RELEASE_PACKAGES } from '../../release/references';
import { holdV1, podControlPlane } from '../support/platform/pod-platform';
import { testNamespace } from '../support/cluster';
import { runPodToEnd } from '../support/run-pod';

const FILE = 'test/cluster/release.test.ts';
const FUNCTION = 'release-test-function';

let kube: Kube;
let node: AttachedNode;
let registry: { host: string; hostFromTest: string; caFile: string };
let work: string;
let out: string;
let run: { code: number | null; output: string };
let record: ReleaseRecord;
let letGo: () => void = () => undefined;

/** skopeo's `--cert-dir` for the run's registry: its CA as `*.crt` in a folder of its own. */
function registryCerts(): string {
  const certs = join(work, 'certs');
  mkdirSync(certs, { recursive: true });
  copyFileSync(registry.caFile, join(certs, 'registry-ca.crt'));
  return certs;
}

beforeAll(async () => {
  const platform = await podControlPlane();
  letGo = await holdV1(FILE);
  kube = platform.control;
  node = platform.node;
  registry = platform.registry;
  work = mkdtempSync(join(tmpdir(), 'klutch-kit-release-test-'));
  out = join(work, 'release');
  run = await runCommand(
    process.execPath,
    [
      join(repoRoot(), 'scripts', 'run-ts.mjs'),
      join(repoRoot(), 'release', 'main.ts'),
      '--registry',
      `${registry.host}/release-test`,
      '--push-registry',
      registry.hostFromTest,
      '--ca-file',
      registry.caFile,
      '--platforms',
      'linux/amd64',
      '--out',
      out,
    ],
    { timeoutMs: 900_000 },
  );
  if (run.code === 0) record = JSON.parse(readFileSync(join(out, 'release.json'), 'utf8')) as ReleaseRecord;
}, 900_000);

afterAll(async () => {
  await kube?.request('DELETE', `/apis/pkg.crossplane.io/v1/functions/${FUNCTION}`);
  letGo();
  if (work) rmSync(work, { recursive: true, force: true });
});

const pinnedRef = (ref: string, digest: string) => `${ref}@${digest}`;

/** The Function object of the release's control-plane bundle. */
function bundledFunction(): WireObject {
  const dir = join(out, 'control-plane', 'function');
  const file = readdirSync(dir).find((f) => /^function-.*\.yaml$/.test(f))!;
  return parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
    .map((d) => d.toJS() as WireObject)
    .find((o) => o?.kind === 'Function')!;
}

describe('npm run release', () => {
  it('publishes every artifact, says each step with its time, and writes a release folder SHA256SUMS covers', async () => {
    expect(run.code, run.output).toBe(0);
    for (let n = 1; n <= 9; n++) expect(run.output).toMatch(new RegExp(`release \\[${n}/9\\] done in \\d+\\.\\ds`));
    expect(run.output).toContain(`release ${VERSION} published (${registry.host}/release-test, ${registry.host}/release-test)`);
    expect(Object.keys(record.images).sort()).toEqual(Object.values(RELEASE_IMAGES).sort());
    expect(Object.keys(record.packages).sort()).toEqual(Object.values(RELEASE_PACKAGES).sort());
    expect(record.executables.map((e) => e.platform)).toEqual(['linux/amd64']);

    // sha256sum itself checks every file, and every file but SHA256SUMS is listed.
    const check = await runCommand('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: out });
    expect(check.code, check.output).toBe(0);
    const listed = readFileSync(join(out, 'SHA256SUMS'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.slice(66));
    const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((p) => statSync(join(out, p)).isFile());
    expect(listed.sort()).toEqual(files.filter((p) => p !== 'SHA256SUMS').sort());
    for (const f of ['charts/klutch-kit-0.1.0.tgz', 'kubectl-bind/kubectl-bind-linux-amd64.tar.gz', 'kubectl-bind/bind.yaml', 'images.txt'])
      expect(listed).toContain(f);
  });

  it("pins every image of its own by digest in the install bundle, the app clusters' konnector and the chart it pushed", async () => {
    expect(run.code, run.output).toBe(0);
    const mine = new Map(Object.values(record.images).map((i) => [imageRepository(i.ref), pinnedRef(i.ref, i.digest)]));
    const imagesOf = (yaml: string) =>
      parseAllDocuments(yaml)
        .map((d) => d.toJS() as WireObject)
        .flatMap((o) => o?.spec?.template?.spec?.containers ?? [])
        .map((c: { image: string }) => c.image);

    const kustomized = await runCommand(kubeBinaryPath(), ['kubectl', 'kustomize', join(out, 'control-plane')]);
    expect(kustomized.code, kustomized.output).toBe(0);
    const konnector = readFileSync(join(out, 'app-cluster', 'konnector', 'konnector.yaml'), 'utf8');
    const helm = await ensureHelm();
    const template = await runCommand(helm, [
      'template',
      'klutch-kit',
      `oci://${registry.hostFromTest}/release-test/${CHART_REPOSITORY}/klutch-kit`,
      '--version',
      VERSION.slice(1),
      '--ca-file',
      registry.caFile,
      '--kube-version',
      KUBE_VERSION,
    ]);
    expect(template.code, template.output).toBe(0);
    for (const [what, images] of [
      ['the control plane bundle', imagesOf(kustomized.stdout)],
      ['the konnector', imagesOf(konnector)],
      ['the chart', imagesOf(template.stdout)],
    ] as const) {
      expect(images.length, what).toBeGreaterThan(0);
      for (const image of images) {
        const repo = imageRepository(image);
        expect(mine.get(repo), `${what}: ${image}`).toBe(image);
      }
    }
    expect(imagesOf(kustomized.stdout)).toContain(mine.get(`${registry.host}/release-test/bind-backend`));
    expect(imagesOf(konnector)).toEqual([mine.get(`${registry.host}/release-test/konnector`)]);
    // images.txt lists each, pinned, for mirroring.
    const list = readFileSync(join(out, 'images.txt'), 'utf8');
    for (const pin of mine.values()) expect(list).toContain(`${pin}\n`);
  });

  it("runs each image as a Pod the kubelet pulls by its digest; the plugin's image installs the release's konnector", async () => {
    expect(run.code, run.output).toBe(0);
    const ns = await testNamespace(kube, 'release');
    const args: Record<string, string[]> = { 'kubectl-bind': ['version'] };
    for (const [name, i] of Object.entries(record.images)) {
      const image = pinnedRef(i.ref, i.digest);
      const r = await runPodToEnd(kube, ns, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          containers: [{ name: 'main', image, imagePullPolicy: 'Always', args: args[name] ?? ['--help'] }],
        },
      });
      expect(r.phase, `${name}: ${r.log}`).toBe('Succeeded');
      // What ran is the digest the release recorded (containerd names it by the first repository it pulled it from: an
      // image of the same bytes may have come to this node under the shared platform's name first).
      expect(r.pod.status.containerStatuses[0].imageID, name).toMatch(new RegExp(`@${i.digest}$`));
      // The backend's AppClusterBindings install the konnector this release pushed, by its digest.
      if (name === 'bind-backend') {
        const konnector = record.images['konnector']!;
        expect(r.log).toContain(`(default: ${pinnedRef(konnector.ref, konnector.digest)})`);
      }
      if (name === 'kubectl-bind') {
        expect(r.log).toContain(`kubectl-bind ${VERSION}`);
        // By the digest this release pushed: the backend and the plugin were bundled after the konnector's image.
        const konnector = record.images['konnector']!;
        expect(r.log).toContain(`konnector image it installs: ${pinnedRef(konnector.ref, konnector.digest)}\n`);
      }
    }
  }, 300_000);

  it('publishes each image and the Function package for linux/amd64 and linux/arm64 under the one digest the bundles pin', async () => {
    expect(run.code, run.output).toBe(0);
    const certs = registryCerts();
    const { skopeo } = await ensurePrograms(['skopeo']);
    // The Function package embeds its runtime, so it is one package per platform too (its config is the runtime's).
    const multiPlatform = { ...record.images, [RELEASE_PACKAGES.function]: record.packages[RELEASE_PACKAGES.function]! };
    for (const [name, i] of Object.entries(multiPlatform)) {
      const at = `${registry.hostFromTest}/${i.ref.slice(i.ref.indexOf('/') + 1, i.ref.lastIndexOf(':'))}@${i.digest}`;
      const raw = await runCommand(skopeo, ['inspect', '--raw', '--cert-dir', certs, `docker://${at}`]);
      expect(raw.code, raw.output).toBe(0);
      const index = JSON.parse(raw.stdout) as { mediaType: string; manifests: { platform: { os: string; architecture: string } }[] };
      expect(index.mediaType, name).toBe('application/vnd.oci.image.index.v1+json');
      expect(index.manifests.map((m) => `${m.platform.os}/${m.platform.architecture}`).sort(), name).toEqual([
        'linux/amd64',
        'linux/arm64',
      ]);
      // The arm64 image's config says so too (a Pod on an arm64 node gets Node for arm64: read at build time, not run here).
      const config = await runCommand(skopeo, ['inspect', '--config', '--override-arch', 'arm64', '--cert-dir', certs, `docker://${at}`]);
      expect(config.code, config.output).toBe(0);
      expect(JSON.parse(config.stdout), name).toMatchObject({ architecture: 'arm64', os: 'linux' });
    }
  });

  it('writes an SBOM of each image and platform, naming the image pushed: its Debian packages, its Node and the npm packages bundled into it', async () => {
    expect(run.code, run.output).toBe(0);
    const certs = registryCerts();
    const { skopeo } = await ensurePrograms(['skopeo']);
    expect(record.sboms.map((s) => `${s.image} ${s.platform}`).sort()).toEqual(
      Object.values(record.images)
        .flatMap((i) => ['linux/amd64', 'linux/arm64'].map((p) => `${i.ref} ${p}`))
        .sort(),
    );
    // The versions installed here: the images' libraries are this machine's packages (arm64's at the same versions),
    // their Node the harness's, their bundles built from this checkout's node_modules.
    const libc6 = debianVersions(['libc6']).lines.split('=')[1]!;
    const clientNode = (
      JSON.parse(readFileSync(join(repoRoot(), 'node_modules', '@kubernetes', 'client-node', 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    for (const s of record.sboms) {
      // Said as each is written: the step is the release's longest after the builds.
      expect(run.output).toMatch(new RegExp(`  ${s.file.replaceAll('.', '\\.')}: \\d+ packages\n`));
      const doc = JSON.parse(readFileSync(join(out, s.file), 'utf8')) as {
        spdxVersion: string;
        packages: { externalRefs?: { referenceLocator: string }[] }[];
      };
      expect(doc.spdxVersion, s.file).toBe('SPDX-2.3');
      const purls = doc.packages.flatMap((p) => (p.externalRefs ?? []).map((r) => r.referenceLocator));
      const has = (prefix: string) =>
        expect(
          purls.some((u) => u.startsWith(prefix)),
          `${s.file}: ${prefix}`,
        ).toBe(true);
      has(`pkg:deb/debian/libc6@${encodeURIComponent(libc6)}?arch=${s.platform.split('/')[1]}&distro=debian-12`);
      has(`pkg:generic/node@${NODE_VERSION}`);
      expect(purls.filter((u) => u.startsWith('pkg:npm/')).length, s.file).toBeGreaterThan(0);
      if (s.image === record.images['konnector']!.ref) has(`pkg:npm/%40kubernetes/client-node@${clientNode}`);
      // The image it describes is the one of its platform in the index the bundles pin.
      const i = Object.values(record.images).find((x) => x.ref === s.image)!;
      const at = `${registry.hostFromTest}/${i.ref.slice(i.ref.indexOf('/') + 1, i.ref.lastIndexOf(':'))}@${i.digest}`;
      const raw = await runCommand(skopeo, ['inspect', '--raw', '--cert-dir', certs, `docker://${at}`]);
      const index = JSON.parse(raw.stdout) as { manifests: { digest: string; platform: { architecture: string } }[] };
      const digest = index.manifests.find((m) => `linux/${m.platform.architecture}` === s.platform)!.digest;
      const oci = purls.filter((u) => u.startsWith('pkg:oci/'));
      expect(oci, s.file).toEqual([expect.stringContaining(`@${encodeURIComponent(digest)}?arch=${s.platform.split('/')[1]}`)]);
    }
  });

  it("pins its packages by digest: the bundle's Function, and the Configuration's dependency on it", async () => {
    expect(run.code, run.output).toBe(0);
    const fn = record.packages[RELEASE_PACKAGES.function]!;
    const repository = fn.ref.slice(0, fn.ref.lastIndexOf(':'));
    expect(bundledFunction().spec.package).toBe(pinnedRef(repository, fn.digest));
    // The Configuration as Crossplane pulls it: its package.yaml, from the layer that holds it.
    const conf = record.packages[RELEASE_PACKAGES.configuration]!;
    const dir = join(work, 'configuration');
    const certs = registryCerts();
    const { skopeo } = await ensurePrograms(['skopeo']);
    const at = `${registry.hostFromTest}/${conf.ref.slice(conf.ref.indexOf('/') + 1, conf.ref.lastIndexOf(':'))}@${conf.digest}`;
    const copied = await runCommand(skopeo, ['copy', '--quiet', '--src-cert-dir', certs, `docker://${at}`, `dir:${dir}`]);
    expect(copied.code, copied.output).toBe(0);
    let meta: WireObject | undefined;
    for (const blob of readdirSync(dir).filter((f) => /^[0-9a-f]{64}$/.test(f))) {
      const r = await runCommand('tar', ['-xOf', join(dir, blob), 'package.yaml']);
      if (r.code === 0) meta = parseAllDocuments(r.stdout)[0]?.toJS() as WireObject;
    }
    expect(meta?.kind).toBe('Configuration');
    const deps = (meta?.spec?.dependsOn ?? []) as { function?: string; version?: string }[];
    expect(deps.find((d) => d.function === repository)?.version).toBe(fn.digest);
  });

  it('its Function package installs on Crossplane by digest, as the bundle names it, and runs the runtime embedded in it', async () => {
    expect(run.code, run.output).toBe(0);
    const pkg = bundledFunction().spec.package as string;
    await applyAt(kube, `/apis/pkg.crossplane.io/v1/functions/${FUNCTION}`, {
      apiVersion: 'pkg.crossplane.io/v1',
      kind: 'Function',
      metadata: { name: FUNCTION },
      // The bundle's runtime config (restricted securityContext), installed with the shared platform.
      spec: {
        package: pkg,
        runtimeConfigRef: {
          apiVersion: 'pkg.crossplane.io/v1beta1',
          kind: 'DeploymentRuntimeConfig',
          name: 'klutch-kit-function-dataservices',
        },
      },
    });
    // Healthy: Crossplane pulled the package by its digest, and the Pod of its embedded runtime is Ready.
    const healthy = await packageHealthy(kube, node, 'functions', FUNCTION);
    expect(healthy.status.resolvedPackage).toBe(pkg);
  }, 300_000);
});
