/**
 * The platform as an operator deploys it, end to end on Pods (issue 18 items 2-5 and 7; docs/decisions/
 * crossplane-deployed.md, images.md, install-bundle.md, graceful-drain.md). The control plane is the run's shared Pod
 * platform (test/support/platform/shared-platform.ts, the sandbox's: docs/decisions/shared-pod-platform.md); this
 * file brings an app cluster with a node of its own, and works in namespaces and claim names of its own. The control
 * plane's node runs a registry of the run (TLS from the run's CA) holding the images built from the synthesized Dockerfiles and the
 * packages `crossplane xpkg build/push` made; Crossplane core from its Helm chart, which installs our Configuration
 * from the registry, resolves its dependencies and starts our function and provider-kubernetes as the Pods it makes;
 * and the install bundle (`kubectl apply -k` of an overlay of its documented knobs): the bind backend as two Pods
 * behind its Service. An app cluster with a node of its own gets the konnector from the shipped YAML, then
 * `kubectl bind` over it; a PostgresqlInstance and a ServiceBinding made in the app cluster become Ready through the
 * real Crossplane on Pods, and `<claim>-creds` arrives in the app cluster. Then the operations: a konnector image
 * rollout with no claim lost, the konnector's readiness failing while its API server is unreachable and recovering,
 * and the backend's leader Pod deleted in the middle of a bind while users keep arriving, none turned away.
 *
 * The network (the workplace rule: only loopback and the run's own namespaces): each node lives in a network namespace
 * of the run. The OpenID provider stays on the host's loopback and is bridged into the control plane's node at the
 * node's address (exposeHostPort), which is its issuer URL; the test's browser reaches that address through a bridge
 * into the node (node.forward). The control plane's API server is bridged into the app cluster's node the same way:
 * that is the external address consumers' kubeconfigs name. The test process reaches the backend's Service through
 * node.forward, on the port its public URL names.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { BASE_IMAGE, DEPLOYABLES, IMAGE_USER } from '../../synth/deployables';
import { Browser } from '../../harness/login/browser';
import { headlessLogin, startCli, type CliRun } from '../../harness/parts/cli';
import { type ControlPlanes, startControlPlanes } from '../../harness/cluster/control-plane';
import { CONFIGURATION_PACKAGE } from '../../harness/crossplane/crossplane';
import { apply, condition } from '../../harness/cluster/kube';
import { CROSSPLANE_NAMESPACE } from '../../synth/synth';
import { applyAt, eventually, execIn, getObject, type Kube, kubeFor, requireOk, type WireObject } from '../../harness/cluster/kube';
import { exposeHostPort } from '../../harness/node/host-port';
import type { AttachedNode } from '../../harness/node/attach';
import { type Node, processesInNetns, startNode } from '../../harness/node/node';
import { cgroupProcs, MACHINE_PATHS, podOutput, runBusybox } from '../../harness/node/pod-checks';
import { CROSSPLANE_IMAGE, DEPLOYABLE_IMAGES, ensureBaseImage, ensureDeployableImages } from '../../harness/node/platform-images';
import { status } from '../../harness/node/registry';
import { BACKEND_DEPLOYMENT, BACKEND_NAMESPACE, kubectl } from '../../harness/platform/bind-bundle';
import { DEPENDENCY_PACKAGES, deploymentAvailable } from '../../harness/platform/crossplane-deployed';
import { holdV1, type PodControlPlane, podControlPlane } from '../support/platform/pod-platform';
import { listPods, podFailure, podTable } from '../../harness/platform/pods';
import { mirrored } from '../../lib/image-reference';
import { PROVIDER_ANYNINES_STAND_IN } from '../../harness/platform/platform-on-pods';
import { isAlive, tail } from '../../harness/cluster/processes';
import { repoRoot } from '../../harness/root';
import { crossplaneVersion } from '../../harness/tools/crossplane';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { NODE_VERSION } from '../../harness/tools/node-runtime';
import { program } from '../../harness/tools/programs';
import { sleep } from '../../lib/abort';

const APP = 'platform-app';
/** Where the images' own checks run on the control plane: a namespace enforcing Pod Security `restricted`. */
const IMAGES_NS = 'platform-pods-images';
const KONNECTOR_NS = 'klutch-bind';
const APP_NS = 'shop';
/** This file's claims (the example names are the v2-native suite's on the same control plane). */
const PREFIX = 'pods-';
const PG = { resource: 'postgresqlinstances', group: 'anynines.com' };
const SB = { resource: 'servicebindings', group: 'anynines.com' };
/** A step of the suite: Pods start, roll and recover in it. */
const STEP = 240_000;
const log = (line: string) => process.stderr.write(`[klutch-kit] ${line}\n`);

let dir: string;
let dist: string;
let cps: ControlPlanes;
let cpNode: AttachedNode;
let appNode: Node;
/** Set once the node checks at the end stopped the app cluster's node (afterAll stops it otherwise). */
let appNodeStopped = false;
/** The machine's default paths of containerd, the kubelet and CNI that exist before the app node starts. */
let machinePathsBefore: string[];
let cp: Kube;
let app: Kube;
let platform: PodControlPlane;
let idp: { issuer: string; ca: string; loginCookie(sub: string): { name: string; value: string } };
let backendCa: string;
let release: (() => void) | undefined;
/** When the control plane was there for this file: from then on it holds the package move (logged when it lets go). */
let since = 0;
/** Lets the shared platform go (once), saying for how long this file held the default package. */
const letGo = () => {
  if (!release) return;
  release();
  release = undefined;
  if (since) log(`platform-pods held the default package for ${((Date.now() - since) / 1000).toFixed(0)} s after the control plane was up`);
};
/** The consumer namespace on the control plane that the app cluster's claims land in (set by the first one). */
let consumerNs: string | undefined;
const closers: (() => Promise<void>)[] = [];
/** The backend's public URL: `https://127.0.0.1:<port>`, a listener of the test process in front of its Service. */
let publicUrl: string;
/** How the browser reaches the issuer's address inside the control plane's node. */
let idpRoute: { host: string; port: number };
/** Where kubectl bind on the host reaches the control plane's external address (the app node's bridge to it). */
let hostRoutes: Record<string, number>;
/** The example claims as synth wrote them. */
let examples: { pg: WireObject; sb: WireObject };

beforeAll(async () => {
  // The shared platform keeps the default package until this file is done (the package move waits for it).
  release = await holdV1('test/cluster/platform-pods.test.ts');
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-platform-pods-'));
  // The app cluster starts while the shared platform does.
  const appCluster = startControlPlanes({ clusters: [APP], binary: kubeBinaryPath(), pods: true });
  appCluster.catch(() => undefined); // awaited below
  // Its control plane is enough (this file brings its own app cluster): about a minute before the sandbox has bound its
  // app cluster and made its claims, which the package move then waits that much less for.
  platform = await podControlPlane();
  since = Date.now();
  dist = platform.synthDir;
  cp = platform.control;
  cpNode = platform.node;
  cps = await appCluster;
  app = kubeFor(cps.clusters[APP]!);
  const images = await ensureDeployableImages(dist, log);
  machinePathsBefore = MACHINE_PATHS.filter((p) => existsSync(p));
  appNode = await startNode(cps.clusters[APP]!, { name: 'platform-app-node', podCidr: '10.244.1.0/24', images: [images.konnector!], log });
  const example = (name: string) =>
    parse(readFileSync(join(dist, 'packages', 'dataservices', 'examples', `${name}.yaml`), 'utf8')) as WireObject;
  examples = { pg: example('postgresql-a8s'), sb: example('servicebinding-a8s') };
  examples.pg.metadata.name = `${PREFIX}${examples.pg.metadata.name}`;
  examples.sb.metadata.name = `${PREFIX}${examples.sb.metadata.name}`;
  examples.sb.spec.instanceRef = examples.pg.metadata.name;

  // The platform's OpenID provider (its issuer at the control plane node's address) and backend, as a user of this
  // machine reaches them; the control plane's API server bridged into this app cluster's node at the external address
  // the install bundle names (the app node's address, the same as the sandbox's app node in its own namespace).
  const l = platform.login;
  idp = { issuer: l.issuer, ca: l.issuerCa, loginCookie: (sub) => ({ name: 'oidc-test-user', value: sub }) };
  idpRoute = l.issuerRoute;
  backendCa = l.backendCa;
  publicUrl = platform.backendUrl;
  writeFileSync(join(dir, 'backend-ca.crt'), backendCa);
  const [external, cpPort] = Object.entries(l.hostRoutes)[0]!;
  const apiBridge = await exposeHostPort(appNode, cpPort);
  closers.push(apiBridge.close);
  expect(apiBridge.address, 'the external address of the install bundle').toBe(external);
  hostRoutes = { [apiBridge.address]: cpPort };
  await requireOk(app, 'POST', '/api/v1/namespaces', { metadata: { name: APP_NS } });
  await requireOk(cp, 'POST', '/api/v1/namespaces', {
    metadata: { name: IMAGES_NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
  });
  await eventually('the default ServiceAccount of the images namespace', () =>
    getObject(cp, `/api/v1/namespaces/${IMAGES_NS}/serviceaccounts/default`),
  );
}, 45 * 60_000);

afterAll(async () => {
  if (cp) log(`Pods of the control plane at the end:\n${podTable(await listPods(cp).catch(() => []))}`);
  if (app) log(`Pods of the app cluster at the end:\n${podTable(await listPods(app).catch(() => []))}`);
  for (const c of closers.reverse()) await c().catch(() => undefined);
  if (!appNodeStopped) await appNode?.stop();
  await cps?.stop();
  await cpNode?.close();
  await cp?.request('DELETE', `/api/v1/namespaces/${IMAGES_NS}`);
  if (dir) rmSync(dir, { recursive: true, force: true });
  letGo();
}, 120_000);

const ready = (p: WireObject) => (p.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');

/** The first Pod matching `selector` in `ns` once `done` holds for it; the error names the Pods and their logs. */
async function podWhere(ns: string, selector: string, what: string, done: (p: WireObject) => boolean, ms = 120_000): Promise<WireObject> {
  return eventually(`a Pod ${selector} in ${ns} ${what}`, async () => (await listPods(cp, ns, selector)).find(done), ms).catch(
    async (e: Error) => {
      throw new Error(`${e.message}\n${await podFailure(cp, cpNode, ns, selector)}`);
    },
  );
}

/** A Deployment whose current template has `replicas` updated, ready Pods; the error names its Pods and their logs. */
async function deploymentReady(
  kube: Kube,
  node: Pick<Node, 'podLogs'>,
  ns: string,
  name: string,
  replicas: number,
  ms = 120_000,
): Promise<WireObject> {
  const path = `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
  return eventually(
    `Deployment ${ns}/${name} with ${replicas} updated, ready replicas`,
    async () => {
      const d = await getObject(kube, path);
      const s = d?.status ?? {};
      return d &&
        s.observedGeneration === d.metadata.generation &&
        s.updatedReplicas === replicas &&
        s.readyReplicas === replicas &&
        s.replicas === replicas
        ? d
        : undefined;
    },
    ms,
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await podFailure(kube, node, ns, '')}`);
  });
}

describe('the registry of the run', () => {
  it('serves over TLS with a certificate of the run CA, and no other client trusts it', async () => {
    expect(platform.registry.host).toBe(`${cpNode.ip}:5000`);
    expect(await status(`https://${platform.registry.hostFromTest}/v2/`, platform.registry.ca)).toBe(200);
    // The machine's CAs do not know it: a client without the run's CA is refused at the handshake.
    const other = spawnSync(
      process.execPath,
      [
        '-e',
        `fetch('https://${platform.registry.hostFromTest}/v2/').then(() => process.exit(0), (e) => { console.log(e.cause?.code); process.exit(1); })`,
      ],
      { encoding: 'utf8' },
    );
    expect(other.status).toBe(1);
    expect(other.stdout.trim()).toMatch(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
  });

  it('holds the images and the packages under their public paths', async () => {
    const r = spawnSync(
      process.execPath,
      ['-e', `fetch('https://${platform.registry.hostFromTest}/v2/_catalog').then((r) => r.text()).then(console.log)`],
      { encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: platform.registry.caFile } },
    );
    // What release.test.ts publishes below release-test/ is its own.
    const repositories = (JSON.parse(r.stdout) as { repositories: string[] }).repositories.filter((x) => !x.startsWith('release-test/'));
    expect(repositories.sort()).toEqual(
      [
        'anynines/provider-anynines',
        'crossplane-contrib/provider-kubernetes',
        'crossplane/crossplane',
        // The release, by its public paths: five images, two packages, the chart.
        'klutch-kit/anynines-dataservices',
        'klutch-kit/bind-backend',
        'klutch-kit/charts/klutch-kit',
        'klutch-kit/conversion-server',
        'klutch-kit/function-dataservices',
        'klutch-kit/function-dataservices-runtime',
        'klutch-kit/konnector',
        'klutch-kit/kubectl-bind',
        'pause',
      ].sort(),
    );
    expect(platform.images[CROSSPLANE_IMAGE]).toBe(mirrored(platform.registry.host, CROSSPLANE_IMAGE));
  });
});

describe('Crossplane as deployed', () => {
  it('runs core from its Helm chart as a Deployment whose Pod the kubelet pulled from the registry', async () => {
    await deploymentAvailable(cp, cpNode, CROSSPLANE_NAMESPACE, 'crossplane', 'app=crossplane');
    const pod = await podWhere(CROSSPLANE_NAMESPACE, 'app=crossplane', 'Ready', ready);
    expect(pod.metadata.labels['app.kubernetes.io/managed-by']).toBe('Helm');
    expect(pod.spec.containers[0].image).toBe(`${platform.registry.host}/crossplane/crossplane:${crossplaneVersion('v2')}`);
    expect(pod.spec.initContainers[0].args.slice(0, 2)).toEqual(['core', 'init']);
    // The kubelet pulled it (nothing was imported into this node's containerd but pause, busybox and CloudNativePG's).
    const events = await requireOk(
      cp,
      'GET',
      `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${pod.metadata.name},reason=Pulled`)}`,
    );
    expect(events.items.map((e: WireObject) => e.message).join('\n')).toContain(
      `Successfully pulled image "${pod.spec.containers[0].image}"`,
    );
    const images = cpNode.exec(program('ctr'), [
      '--address',
      join(cpNode.runDir, 'containerd', 'containerd.sock'),
      '-n',
      'k8s.io',
      'images',
      'ls',
      '-q',
    ]);
    expect(images.output).toContain(`${platform.registry.host}/crossplane/crossplane:${crossplaneVersion('v2')}`);
    expect(images.output).not.toContain(CROSSPLANE_IMAGE);
  });

  it('installs the Configuration from the registry by its public name and resolves dependsOn to the packages there', async () => {
    const config = await getObject(cp, '/apis/pkg.crossplane.io/v1/configurations/anynines-dataservices');
    expect(config!.spec.package).toBe(CONFIGURATION_PACKAGE);
    expect(condition(config, 'Healthy'), JSON.stringify(config?.status)).toBe('True');
    expect(config!.status.resolvedPackage).toBe(mirrored(platform.registry.host, CONFIGURATION_PACKAGE));
    for (const p of Object.values(DEPENDENCY_PACKAGES)) {
      const pkg = await getObject(cp, `/apis/pkg.crossplane.io/v1/${p.plural}/${p.name}`);
      expect(condition(pkg, 'Healthy'), `${p.kind} ${p.name}`).toBe('True');
      // The install bundle's Function and Provider, and the stand-in the resolver installed: pulled from the mirror.
      expect(pkg!.status.resolvedPackage.startsWith(`${platform.registry.host}/`), JSON.stringify(pkg!.status)).toBe(true);
    }
    const stand = await getObject(cp, `/apis/pkg.crossplane.io/v1/providers/${DEPENDENCY_PACKAGES.providerAnynines.name}`);
    expect(stand!.spec.package).toMatch(new RegExp(`^${PROVIDER_ANYNINES_STAND_IN.split(':')[0]}`));
    // Healthy comes when the package's objects are applied; the XRDs offer their claims a little later.
    await eventually('the PostgresqlInstance XRD to offer its claim', async () => {
      const xrd = await getObject(
        cp,
        '/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xpostgresqlinstances.anynines.com',
      );
      return condition(xrd, 'Offered') === 'True' ? xrd : undefined;
    });
  });

  it('starts our function and provider-kubernetes as Pods it made, from the images embedded in their packages', async () => {
    for (const p of [DEPENDENCY_PACKAGES.function, DEPENDENCY_PACKAGES.providerKubernetes]) {
      const pod = await podWhere(CROSSPLANE_NAMESPACE, `pkg.crossplane.io/${p.kind.toLowerCase()}=${p.name}`, 'Ready', ready);
      const rs = await getObject(
        cp,
        `/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/replicasets/${pod.metadata.ownerReferences[0].name}`,
      );
      const deployment = await getObject(
        cp,
        `/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments/${rs!.metadata.ownerReferences[0].name}`,
      );
      expect(deployment!.metadata.ownerReferences[0].kind).toBe(`${p.kind}Revision`);
      expect(pod.spec.containers[0].image.startsWith(`${platform.registry.host}/`)).toBe(true);
    }
  });
});

/** A JSON blob of an OCI archive, by digest (`sha256:...`) or the top-level file name (`index.json`). */
function blob(archive: string, ref: string): WireObject {
  const member = ref.startsWith('sha256:') ? `blobs/sha256/${ref.slice(7)}` : ref;
  const r = spawnSync('tar', ['xOf', archive, member], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`reading ${member} of ${archive}: ${r.stderr}`);
  return JSON.parse(r.stdout) as WireObject;
}

/** The image's name, manifest and config, as an OCI archive holds them. */
function image(archive: string): { name: string; manifest: WireObject; config: WireObject } {
  const index = blob(archive, 'index.json');
  expect(index.manifests).toHaveLength(1);
  const manifest = blob(archive, index.manifests[0].digest);
  return {
    name: index.manifests[0].annotations['org.opencontainers.image.ref.name'],
    manifest,
    config: blob(archive, manifest.config.digest),
  };
}

/** The restricted securityContext the synthesized Deployments give their containers. */
const RESTRICTED = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: IMAGE_USER,
  runAsGroup: IMAGE_USER,
  seccompProfile: { type: 'RuntimeDefault' },
};

/** The Pod's status once `done` holds it; the error names the Pod, its status and the kubelet's log. */
async function podUntil(ns: string, name: string, what: string, done: (pod: WireObject) => boolean): Promise<WireObject> {
  let last: WireObject | undefined;
  try {
    return await eventually(
      `Pod ${ns}/${name} ${what}`,
      async () => {
        last = await getObject(cp, `/api/v1/namespaces/${ns}/pods/${name}`);
        return last && done(last) ? last : undefined;
      },
      120_000,
    );
  } catch (e) {
    const logs = await cp.request('GET', `/api/v1/namespaces/${ns}/pods/${name}/log`);
    throw new Error(
      `${(e as Error).message}\nPod status: ${JSON.stringify(last?.status)}\nits log: ${String(logs.body?.message ?? JSON.stringify(logs.body))}\n` +
        `kubelet log ${cpNode.kubeletLog}:\n${tail(cpNode.kubeletLog, 15)}`,
    );
  }
}

/** A one-container Pod of `image` with `args`, restricted as the synthesized Deployments are. */
function pod(name: string, image: string, args: string[], extra: WireObject = {}): Promise<WireObject> {
  return applyAt(cp, `/api/v1/namespaces/${IMAGES_NS}/pods/${name}`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: IMAGES_NS },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'main', image, args, securityContext: RESTRICTED, ...extra }],
    },
  });
}

describe('images without Docker, pulled from the registry', () => {
  it('builds every deployable from the Dockerfile synth writes, on the base image made locally under the name it uses', async () => {
    const archives = await ensureDeployableImages(dist, log);
    const base = image(await ensureBaseImage(log));
    expect(base.name).toBe(BASE_IMAGE);
    expect(base.config.config).toMatchObject({
      User: `${IMAGE_USER}:${IMAGE_USER}`,
      Entrypoint: ['/nodejs/bin/node'],
      WorkingDir: '/home/nonroot',
    });
    const baseLayers = base.manifest.layers.map((l: WireObject) => l.digest);
    for (const d of DEPLOYABLES) {
      const dockerfile = readFileSync(join(dist, d.name, 'Dockerfile'), 'utf8');
      expect(dockerfile).toContain(`FROM ${BASE_IMAGE}\n`);
      const img = image(archives[d.name]!);
      expect(img.name).toBe(DEPLOYABLE_IMAGES[d.name]);
      expect(img.manifest.annotations['org.opencontainers.image.base.name']).toBe(BASE_IMAGE);
      // The base's layers, then one layer of the Dockerfile's COPYs.
      expect(img.manifest.layers.map((l: WireObject) => l.digest).slice(0, baseLayers.length)).toEqual(baseLayers);
      expect(img.manifest.layers).toHaveLength(baseLayers.length + 1);
      expect(img.config.config.User).toBe(`${IMAGE_USER}:${IMAGE_USER}`);
      // The Dockerfile's ENTRYPOINT (node, its flags, the bundle), as buildah read it.
      expect(img.config.config.Entrypoint).toEqual(JSON.parse(/^ENTRYPOINT (.+)$/m.exec(dockerfile)![1]!));
      expect(img.config.config.Entrypoint.at(-1)).toBe(`/${d.name}/${d.name}.mjs`);
      expect(Object.keys(img.config.config.ExposedPorts ?? {}).sort()).toEqual(d.ports.map((p) => `${p.port}/tcp`).sort());
    }
    // Built once: unchanged inputs reuse the archives.
    // (A rebuild writes a new file and renames it over: a new inode. Use refreshes the mtime, so that is no sign.)
    const inodes = Object.values(archives).map((a) => statSync(a).ino);
    const again = await ensureDeployableImages(dist, log);
    expect(again).toEqual(archives);
    expect(Object.values(again).map((a) => statSync(a).ino)).toEqual(inodes);
  }, 120_000);

  it('runs the backend and kubectl-bind images as restricted Pods, and the function Pod Crossplane made on Node 24', async () => {
    await pod('kubectl-bind', platform.images[DEPLOYABLE_IMAGES['kubectl-bind']!]!, ['--version']);
    await pod('backend', platform.images[DEPLOYABLE_IMAGES.backend!]!, ['--help']);
    // Klutch's manifests start their backend as /ko-app/example-backend: the image's script there runs the bundle.
    await pod('backend-klutch-path', platform.images[DEPLOYABLE_IMAGES.backend!]!, ['--help'], { command: ['/ko-app/example-backend'] });
    for (const name of ['kubectl-bind', 'backend', 'backend-klutch-path']) {
      await podUntil(IMAGES_NS, name, 'Succeeded', (p) => {
        if (p.status?.phase === 'Failed') throw new Error(`${name} failed: ${JSON.stringify(p.status)}`);
        return p.status?.phase === 'Succeeded';
      });
    }
    const cli = await cp.request('GET', `/api/v1/namespaces/${IMAGES_NS}/pods/kubectl-bind/log`);
    expect(String(cli.body.message)).toContain('kubectl-bind v0.1.0');
    const backend = await cp.request('GET', `/api/v1/namespaces/${IMAGES_NS}/pods/backend/log`);
    expect(String(backend.body.message)).toContain('Usage: node backend.mjs');
    const klutchPath = await cp.request('GET', `/api/v1/namespaces/${IMAGES_NS}/pods/backend-klutch-path/log`);
    expect(String(klutchPath.body.message)).toBe(String(backend.body.message));
    const fn = await podWhere(CROSSPLANE_NAMESPACE, `pkg.crossplane.io/function=${DEPENDENCY_PACKAGES.function.name}`, 'Ready', ready);
    const version = await execIn(cp, CROSSPLANE_NAMESPACE, fn.metadata.name, fn.spec.containers[0].name, [
      '/nodejs/bin/node',
      '-p',
      'process.version',
    ]);
    expect(version.trim()).toBe(`v${NODE_VERSION}`);
  }, 180_000);

  it(
    "runs Klutch's own konnector manifests with only the image replaced by ours: both replicas Ready on /healthz, one leads",
    async () => {
      // test/fixtures/klutch-bind-deploy/konnector/: Klutch's Namespace, `*/*/*` ClusterRole and binding, ServiceAccount
      // and Deployment (selector app: konnector, no arguments, POD_NAME/POD_NAMESPACE, readiness /healthz on 8080). On
      // the control plane, pulled from the registry: the app cluster gets ours, whose selector differs (immutable).
      const fixtures = join(repoRoot(), 'test', 'fixtures', 'klutch-bind-deploy', 'konnector');
      const docs = readdirSync(fixtures)
        .filter((f) => f.endsWith('.yaml'))
        .sort()
        .flatMap((f) => parseAllDocuments(readFileSync(join(fixtures, f), 'utf8')).map((d) => d.toJS() as WireObject));
      const deployment = docs.find((d) => d.kind === 'Deployment')!;
      expect(deployment.spec.template.spec.containers[0].image).toBe('IMAGE');
      deployment.spec.template.spec.containers[0].image = platform.images[DEPLOYABLE_IMAGES.konnector!];
      for (const d of docs) await apply(cp, d as never);
      const path = `/apis/apps/v1/namespaces/${KONNECTOR_NS}/deployments/konnector`;
      try {
        await eventually(
          "Klutch's konnector Deployment to have 2 ready replicas",
          async () => {
            const d = await getObject(cp, path);
            return d?.status?.readyReplicas === 2 ? d : undefined;
          },
          180_000,
        );
        const lease = await eventually('a replica holding the Lease', async () => {
          const l = await getObject(cp, `/apis/coordination.k8s.io/v1/namespaces/${KONNECTOR_NS}/leases/klutch-bind`);
          return l?.spec?.holderIdentity ? l : undefined;
        });
        const pods = await listPods(cp, KONNECTOR_NS, 'app=konnector');
        expect(pods.map((p) => p.metadata.name)).toContain(lease.spec.holderIdentity);
      } finally {
        await cp.request('DELETE', `/api/v1/namespaces/${KONNECTOR_NS}`);
      }
      // Its own wait for the replicas is 180 s, as the other steps' (STEP); the run's 60 s default cut it first on a new
      // machine, where two replicas of a fresh image start in 26 and 46 s under the run's load (issue 43).
    },
    STEP,
  );
});

describe('the install bundle on the control plane, the backend as Pods', () => {
  it(
    'runs the backend Deployment of the bundle: two Pods of its image Ready (issuer discovered through the bridge), one leads',
    async () => {
      const d = await deploymentReady(cp, cpNode, BACKEND_NAMESPACE, BACKEND_DEPLOYMENT, 2);
      // The release's bundle names it by digest; the node pulled it from the registry, the mirror of its public name.
      const image = d.spec.template.spec.containers[0].image as string;
      expect(image).toMatch(new RegExp(`^${DEPLOYABLE_IMAGES.backend!.replaceAll('.', '\\.')}@sha256:[0-9a-f]{64}$`));
      const pod = (await listPods(cp, BACKEND_NAMESPACE, 'app.kubernetes.io/name=klutch-bind-backend'))[0]!;
      // Pulled by that digest (containerd names the image by the first repository it came to the node from).
      expect(pod.status.containerStatuses[0].imageID.endsWith(image.slice(image.indexOf('@')))).toBe(true);
      const lease = await leaderLease();
      expect((await listPods(cp, BACKEND_NAMESPACE, 'app.kubernetes.io/name=klutch-bind-backend')).map((p) => p.metadata.name)).toContain(
        lease.spec.holderIdentity,
      );
    },
    STEP,
  );

  it('runs it with the production Component: its disruption budget counts both Pods, so a drain evicts one at a time', async () => {
    const d = await deploymentReady(cp, cpNode, BACKEND_NAMESPACE, BACKEND_DEPLOYMENT, 2);
    expect(d.spec.template.spec.topologySpreadConstraints.map((c: { topologyKey: string }) => c.topologyKey)).toEqual([
      'kubernetes.io/hostname',
      'topology.kubernetes.io/zone',
    ]);
    // The disruption controller's view, which the API server reads on every eviction.
    const budget = await eventually('the disruption budget to count both Pods', async () => {
      const b = await getObject(cp, `/apis/policy/v1/namespaces/${BACKEND_NAMESPACE}/poddisruptionbudgets/${BACKEND_DEPLOYMENT}`);
      return b?.status?.currentHealthy === 2 ? b : undefined;
    });
    expect(budget.status).toMatchObject({ expectedPods: 2, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
    // An eviction (as a drain asks, dry run: the platform keeps both) is admitted while the other Pod serves.
    const [pod] = await listPods(cp, BACKEND_NAMESPACE, 'app.kubernetes.io/name=klutch-bind-backend');
    const evicted = await cp.request('POST', `/api/v1/namespaces/${BACKEND_NAMESPACE}/pods/${pod!.metadata.name}/eviction?dryRun=All`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod!.metadata.name, namespace: BACKEND_NAMESPACE },
    });
    expect(evicted.code, JSON.stringify(evicted.body)).toBe(201);
  });

  it('answers through its Service on the public URL: /export names the authorize URL of its public address', async () => {
    // kube-proxy programs the Service's rules after the endpoints turn ready, a moment after the Pods do: until then the
    // connection through the bridge is dropped, as on any cluster. Wait for the first answer, then judge it.
    const browser = new Browser({ ca: [backendCa] });
    const page = await eventually(`the backend Service to answer ${publicUrl}/export`, () =>
      browser.get(`${publicUrl}/export`).catch(() => undefined),
    );
    expect(page.status, page.body).toBe(200);
    const doc = JSON.parse(page.body);
    expect(doc.authenticationMethods[0].oauth2CodeGrant.authenticatedURL).toBe(`${publicUrl}/authorize`);
  });
});

/** `kubectl bind <publicUrl>/export` as a user runs it, the login done by a browser on the control plane's network. */
async function bind(extra: readonly string[] = []): Promise<CliRun> {
  return startCli([`${publicUrl}/export`, '--accept-permission-claims', '--no-browser', '--wait=120s', ...extra], {
    kubeconfig: cps.clusters[APP]!.kubeconfig,
    env: {
      NODE_EXTRA_CA_CERTS: join(dir, 'backend-ca.crt'),
      // The user's machine reaches the external address the provider kubeconfig names (the app node's bridge to the
      // control plane) at the same API server on loopback; any other address is refused (host-routes.cjs).
      NODE_OPTIONS: `--require ${join(repoRoot(), 'harness', 'node', 'host-routes.cjs')}`,
      KLUTCH_KIT_HOST_ROUTES: JSON.stringify(hostRoutes),
    },
    closeStdin: true,
  });
}
async function login(url: string, resource: string): Promise<void> {
  await headlessLogin(url, {
    idp,
    user: platform.login.user,
    resource,
    ca: [backendCa],
    route: (u) => (u.hostname === cpNode.ip ? idpRoute : undefined),
  });
}
async function done(run: CliRun): Promise<void> {
  const r = await run.done;
  if (r.code !== 0) throw new Error(`kubectl bind exited ${r.code ?? r.signal}:\n${r.stderr}\n${r.stdout}`);
}

describe('the konnector as Pods in an app cluster', () => {
  let deploymentUid: string;

  it(
    'runs the shipped konnector YAML (dist/app-cluster/konnector/konnector.yaml) unchanged as Pods of its image: restricted, with its ServiceAccount token, probes Ready, one leads',
    async () => {
      const r = await kubectl(cps.clusters[APP]!, [
        'apply',
        '--server-side',
        '-f',
        join(dist, 'app-cluster', 'konnector', 'konnector.yaml'),
      ]);
      expect(r.code, r.out).toBe(0);
      const d = await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2);
      deploymentUid = d.metadata.uid;
      expect(d.spec.template.spec.containers[0].image).toBe(DEPLOYABLE_IMAGES.konnector);
      const selector = Object.entries(d.spec.selector.matchLabels as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const running = await listPods(app, KONNECTOR_NS, selector);
      expect(running).toHaveLength(2);
      const pod = running[0]!;
      expect(pod.spec.serviceAccountName).toBe('konnector');
      // The namespace enforces Pod Security `restricted` (its label in konnector.yaml), so the replicas passed it: the
      // same image without the Deployment's securityContext is refused.
      const refused = await app.request('POST', `/api/v1/namespaces/${KONNECTOR_NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'unrestricted' },
        spec: { containers: [{ name: 'main', image: DEPLOYABLE_IMAGES.konnector, imagePullPolicy: 'Never' }] },
      });
      expect(refused.code, JSON.stringify(refused.body)).toBe(403);
      expect(String(refused.body.message)).toContain('violates PodSecurity "restricted:latest"');

      // What the process is allowed, as the kernel sees it inside the container.
      const probe = `
const fs = require('node:fs');
const status = Object.fromEntries(fs.readFileSync('/proc/self/status', 'utf8').split('\\n').map((l) => l.split(':\\t')));
let write; try { fs.writeFileSync('/konnector/x', ''); write = 'written'; } catch (e) { write = e.code; }
const sa = '/var/run/secrets/kubernetes.io/serviceaccount/';
console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), capEff: status.CapEff, seccomp: status.Seccomp,
  noNewPrivs: status.NoNewPrivs, write, token: fs.readFileSync(sa + 'token', 'utf8').split('.').length,
  namespace: fs.readFileSync(sa + 'namespace', 'utf8'), user: require('node:os').userInfo().username, cwd: process.cwd(),
  home: fs.statSync('/home/nonroot').uid, caBundle: fs.statSync(process.env.SSL_CERT_FILE).size > 100000 }));`;
      const seen = JSON.parse(await execIn(app, KONNECTOR_NS, pod.metadata.name, 'konnector', ['/nodejs/bin/node', '-e', probe]));
      expect(seen).toEqual({
        uid: IMAGE_USER,
        gid: IMAGE_USER,
        capEff: '0000000000000000',
        seccomp: '2',
        noNewPrivs: '1',
        write: 'EROFS',
        token: 3,
        namespace: KONNECTOR_NS,
        // distroless' user, its home and the CA bundle: the base image made here has them where distroless does.
        user: 'nonroot',
        cwd: '/home/nonroot',
        home: IMAGE_USER,
        caBundle: true,
      });
      // The token works: a replica leads through the Lease in its namespace, which it can only write as `konnector`.
      await eventually('the konnector Lease held by one of its Pods', async () => {
        const l = await getObject(app, `/apis/coordination.k8s.io/v1/namespaces/${KONNECTOR_NS}/leases/klutch-bind`);
        return running.some((p) => p.metadata.name === l?.spec?.holderIdentity) ? l : undefined;
      });
      // Its readiness answers from inside the Pod network, as the kubelet's probe does. A replica that has just taken
      // the Lease is not ready until its informers have listed the app cluster (seen once: 503 right after the Lease
      // was taken), so this reads it as the kubelet does, again until it answers.
      await eventually(`/readyz of ${pod.metadata.name} answering 200 from the Pod network`, async () => {
        const readyz = appNode.exec(program('busybox'), ['wget', '-q', '-O-', `http://${pod.status.podIP}:8080/readyz`]);
        if (readyz.code !== 0) throw new Error(readyz.output);
        return true;
      });
    },
    STEP,
  );

  it(
    'kubectl bind over it: the same Deployment (no selector conflict); a PostgresqlInstance made in the app cluster goes Ready through Crossplane on Pods',
    async () => {
      const run = await bind();
      await login(await run.loginUrl(), PG.resource);
      await done(run);
      const d = await getObject(app, `/apis/apps/v1/namespaces/${KONNECTOR_NS}/deployments/konnector`);
      expect(d?.metadata.uid).toBe(deploymentUid);
      await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2);
      // The example claim as synth wrote it, in the app cluster: up to the control plane, composed by our function's
      // Pod into a provider-kubernetes Object whose a8s Postgresql the operators' stand-in reports running; Ready
      // comes back down.
      const name = examples.pg.metadata.name as string;
      await createClaim(PG.resource, { ...examples.pg, metadata: { name, namespace: APP_NS } });
      const up = await upstream(PG.resource, name);
      // The platform's a8s stand-in reports it running once composed.
      await forClaim(PG.resource, up.metadata.namespace, name, 'the a8s Postgresql composed and Running', async () => {
        const pg = await getObject(cp, `/apis/postgresql.anynines.com/v1beta3/namespaces/${up.metadata.namespace}/postgresqls/${name}`);
        return pg?.status?.clusterStatus === 'Running' ? pg : undefined;
      });
      await forClaim(PG.resource, up.metadata.namespace, name, `claim ${APP_NS}/${name} Ready in the app cluster`, async () => {
        const c = await getObject(app, claimPath(PG.resource, APP_NS, name));
        return condition(c, 'Ready') === 'True' ? c : undefined;
      });
    },
    STEP,
  );

  it(
    'rolls out a new konnector image with no claim lost: the claims stay on both sides and a new one syncs',
    async () => {
      const next = DEPLOYABLE_IMAGES.konnector!.replace(/:[^:]+$/, ':v0.1.1-test');
      const tagged = appNode.exec(program('ctr'), [
        '--address',
        join(appNode.runDir, 'containerd', 'containerd.sock'),
        '-n',
        'k8s.io',
        'images',
        'tag',
        DEPLOYABLE_IMAGES.konnector!,
        next,
      ]);
      expect(tagged.code, tagged.output).toBe(0);
      const before = await upstreamClaims();
      const r = await kubectl(cps.clusters[APP]!, ['-n', KONNECTOR_NS, 'set', 'image', 'deployment/konnector', `konnector=${next}`]);
      expect(r.code, r.out).toBe(0);
      const d = await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2);
      expect(d.spec.template.spec.containers[0].image).toBe(next);
      await eventually('only Pods of the new image', async () => {
        const ps = await listPods(app, KONNECTOR_NS, 'app.kubernetes.io/name=konnector');
        return ps.length === 2 && ps.every((p) => p.spec.containers[0].image === next && ready(p)) ? ps : undefined;
      });
      await claimSyncs('after-upgrade');
      const after = await upstreamClaims();
      for (const [name, uid] of before) expect(after.get(name), name).toBe(uid);
    },
    STEP,
  );

  it(
    "fails the konnector's readiness while its API server is unreachable from the Pods, and recovers",
    async () => {
      const apiPort = Number(new URL(cps.clusters[APP]!.server).port);
      // Pods reach the API server over the node's bridge interface; the kubelet (its status reports) over loopback.
      const rule = ['INPUT', '-i', 'kk0', '-p', 'tcp', '--dport', String(apiPort), '-j', 'REJECT', '--reject-with', 'tcp-reset'];
      expect(appNode.exec(program('iptables'), ['-I', ...rule]).code).toBe(0);
      try {
        await eventually(
          'a konnector Pod not Ready while the API server is unreachable',
          async () => ((await listPods(app, KONNECTOR_NS, 'app.kubernetes.io/name=konnector')).some((p) => !ready(p)) ? true : undefined),
          90_000,
        );
      } finally {
        appNode.exec(program('iptables'), ['-D', ...rule]);
      }
      await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2, 120_000);
      await claimSyncs('after-outage');
    },
    STEP,
  );
});

describe('the backend at two replicas', () => {
  it(
    "binds while the leader's Pod is deleted in the middle of the bind, turning no request away; the ServiceBinding brings <claim>-creds to the app cluster",
    async () => {
      const lease = await leaderLease();
      const leader = await requireOk(cp, 'GET', `/api/v1/namespaces/${BACKEND_NAMESPACE}/pods/${lease.spec.holderIdentity}`);
      // The leader's own address, past the Service: whether it still serves once the Service has forgotten it.
      const direct = await cpNode.forward(leader.status.podIP, 8080);
      // The konnector came from the shipped YAML: its access to the API bound now, as an operator applies it beside.
      const access = await kubectl(cps.clusters[APP]!, [
        'apply',
        '--server-side',
        '-f',
        join(dist, 'app-cluster', 'konnector', 'access', `${SB.resource}.yaml`),
      ]);
      expect(access.code, access.out).toBe(0);
      // Users keep arriving while the Pod goes: none may be turned away (a terminating replica drains, it is not cut off).
      const stream = requestStream(`${publicUrl}/export`);
      let seen: { answered: number; failures: string[] };
      try {
        const run = await bind(['--skip-konnector']);
        const url = await run.loginUrl();
        await requireOk(cp, 'DELETE', `/api/v1/namespaces/${BACKEND_NAMESPACE}/pods/${leader.metadata.name}`);
        // The drain: the endpoints no longer count the Pod as ready (kube-proxy is told to send it nothing new), and
        // the Pod still answers: a replica that stopped at once would refuse here what kube-proxy still sent it.
        await eventually(`the Service's endpoints to drop ${leader.metadata.name}`, async () => {
          const slices = await requireOk(
            cp,
            'GET',
            `/apis/discovery.k8s.io/v1/namespaces/${BACKEND_NAMESPACE}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${BACKEND_DEPLOYMENT}`)}`,
          );
          const mine = (slices.items as WireObject[])
            .flatMap((s) => s.endpoints ?? [])
            .find((e: WireObject) => e.targetRef?.uid === leader.metadata.uid);
          return !mine || mine.conditions?.ready === false ? true : undefined;
        });
        // For a few seconds more: the kubelet has long sent SIGTERM to a Pod without a drain by then.
        for (let i = 0; i < 3; i++) {
          const late = await new Browser({ ca: [backendCa], route: () => ({ host: '127.0.0.1', port: direct.port }) }).get(
            `${publicUrl}/export`,
          );
          expect(late.status, late.body).toBe(200);
          await sleep(1_000);
        }
        await login(url, SB.resource);
        await done(run);
        await eventually(
          `the deleted leader's Pod ${leader.metadata.name} gone`,
          async () => ((await getObject(cp, `/api/v1/namespaces/${BACKEND_NAMESPACE}/pods/${leader.metadata.name}`)) ? undefined : true),
          120_000,
        );
      } finally {
        await direct.close();
        seen = await stream.stop();
        log(`requests through the Service while the leader's Pod went: ${seen.answered} answered, ${seen.failures.length} failed`);
      }
      expect(seen.failures, `${seen.failures.length} of ${seen.answered + seen.failures.length} requests failed`).toEqual([]);
      expect(seen.answered).toBeGreaterThan(0);
      await deploymentReady(cp, cpNode, BACKEND_NAMESPACE, BACKEND_DEPLOYMENT, 2);
      const next = await eventually('another replica leading', async () => {
        const l = await getObject(cp, `/apis/coordination.k8s.io/v1/namespaces/${BACKEND_NAMESPACE}/leases/${lease.metadata.name}`);
        return l?.spec?.holderIdentity && l.spec.holderIdentity !== lease.spec.holderIdentity ? l : undefined;
      });
      expect(next.spec.holderIdentity).not.toBe(lease.spec.holderIdentity);

      // The example ServiceBinding of the example instance, made in the app cluster: the a8s ServiceBinding on the
      // control plane, implemented by the operators' stand-in, becomes `<claim>-creds` upstream and down here.
      const name = examples.sb.metadata.name as string;
      await createClaim(SB.resource, { ...examples.sb, metadata: { name, namespace: APP_NS } });
      const up = await upstream(SB.resource, name);
      const ns = up.metadata.namespace as string;
      // The platform's a8s stand-in implements it, writing credentials where the service-binding controller would.
      const implemented = await forClaim(SB.resource, ns, name, 'the a8s ServiceBinding composed and implemented', async () => {
        const sb = await getObject(cp, `/apis/servicebindings.anynines.com/v1beta3/namespaces/${ns}/servicebindings/${name}`);
        if (sb?.status?.implemented !== true) return undefined;
        return getObject(cp, `/api/v1/namespaces/${ns}/secrets/${name}-service-binding`);
      });
      const credentials = Object.fromEntries(
        Object.entries(implemented.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      );
      expect(credentials.instance_service).toBe(`${examples.pg.metadata.name}-master.${ns}`);
      const secret = await forClaim(SB.resource, ns, name, `Secret ${APP_NS}/${name}-creds in the app cluster`, async () => {
        const s = await getObject(app, `/api/v1/namespaces/${APP_NS}/secrets/${name}-creds`);
        return Object.keys(s?.data ?? {}).length > 0 ? s : undefined;
      });
      expect(
        Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])),
      ).toEqual(credentials);
      await forClaim(SB.resource, ns, name, `claim ${APP_NS}/${name} Ready in the app cluster`, async () => {
        const c = await getObject(app, claimPath(SB.resource, APP_NS, name));
        return condition(c, 'Ready') === 'True' ? c : undefined;
      });
    },
    STEP,
  );
});

/**
 * The app cluster's node as a harness node (issue 18, harness/node/; these were node.test.ts, which started a
 * control plane and a node of its own for them): Ready with its address only in its own network namespace, a Pod of a
 * locally built image with a readiness probe, a Service by ClusterIP and DNS name, the API server reaching the kubelet
 * and the Pods, a Pod reaching the API server with its token, nothing left once the node is stopped, and the reaper
 * after a killed runner. They touch only this file's app cluster, so the shared platform is let go first: the package
 * move need not wait for them.
 */
describe("the app cluster's node", () => {
  const NS = 'node-checks';
  beforeAll(async () => {
    // Nothing of this file acts on the shared platform from here: its konnector (which syncs this file's claims with
    // the control plane) stops, its images namespace goes, then the package move may start.
    await requireOk(
      app,
      'PATCH',
      `/apis/apps/v1/namespaces/${KONNECTOR_NS}/deployments/konnector`,
      { spec: { replicas: 0 } },
      'application/merge-patch+json',
    );
    await eventually('no konnector Pod left in the app cluster', async () =>
      (await listPods(app, KONNECTOR_NS, 'app=konnector')).length === 0 ? true : undefined,
    );
    await cp.request('DELETE', `/api/v1/namespaces/${IMAGES_NS}`);
    letGo();
    await requireOk(app, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
    // Pods need the namespace's ServiceAccount (ServiceAccount admission), which the controller-manager makes.
    await eventually('the default ServiceAccount of the node checks namespace', () =>
      getObject(app, `/api/v1/namespaces/${NS}/serviceaccounts/default`),
    );
  }, STEP);
  const run = (name: string, script: string, phase: 'Running' | 'Succeeded', extra: WireObject = {}) =>
    runBusybox(app, appNode, NS, name, script, phase, extra);

  it('registers a Ready node whose address exists only inside its own network namespace', async () => {
    const n = await getObject(app, `/api/v1/nodes/${appNode.name}`);
    expect(n?.status?.conditions?.find((c: WireObject) => c.type === 'Ready')?.status).toBe('True');
    expect(n?.status?.addresses).toContainEqual({ type: 'InternalIP', address: appNode.ip });
    expect(n?.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\/1\.6\./);
    expect(n?.status?.nodeInfo?.kubeletVersion).toBe('v1.34.1');
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .map((a) => a?.address);
    expect(hostAddresses).not.toContain(appNode.ip);
    expect(processesInNetns(appNode.netns).length).toBeGreaterThan(0);
  });

  it('runs a Pod of a locally built image, its readiness probe answered through the Pod network', async () => {
    const pod = await run('web', 'echo "hello from $HOSTNAME" > /www/index.html && exec httpd -f -v -p 8080 -h /www', 'Running', {
      readinessProbe: { httpGet: { path: '/index.html', port: 8080 }, periodSeconds: 1 },
    });
    expect(pod.status.podIP).toMatch(/^10\.244\.1\./);
    expect(pod.spec.nodeName).toBe(appNode.name);
  }, 120_000);

  it('lets a second Pod reach the first through its Service ClusterIP and its DNS name', async () => {
    const svc = await applyAt(app, `/api/v1/namespaces/${NS}/services/web`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const ip = svc.spec.clusterIP as string;
    expect(ip).toMatch(/^10\.0\.0\./);
    // The endpointslice controller and kube-proxy need a moment for a new Service: the client retries.
    await run(
      'client',
      // busybox 1.35's `wget -T` crashes (SIGSEGV); its `timeout` bounds each try instead.
      `for i in $(seq 1 30); do timeout 3 wget -q -O- http://${ip}/index.html && break; sleep 1; done; ` +
        `for i in $(seq 1 30); do timeout 3 wget -q -O- http://web.${NS}.svc.cluster.local/index.html && break; sleep 1; done`,
      'Succeeded',
    );
    expect(podOutput(appNode, NS, 'client').match(/hello from web/g)).toHaveLength(2);
  }, 120_000);

  it('lets the API server reach the kubelet and the Pods through its egress into the node: Pod logs, Pod and Service proxies, exec', async () => {
    const logs = await app.request('GET', `/api/v1/namespaces/${NS}/pods/web/log`);
    expect(logs.code, JSON.stringify(logs.body)).toBe(200);
    expect(String(logs.body.message)).toContain('response:200');
    for (const path of ['pods/web:8080/proxy/index.html', 'services/web:80/proxy/index.html']) {
      const r = await app.request('GET', `/api/v1/namespaces/${NS}/${path}`);
      expect(r.code, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(String(r.body.message)).toBe('hello from web\n');
    }
    // exec: the API server upgrades the kubelet connection (a websocket to the client) through the same egress.
    expect(await execIn(app, NS, 'web', 'main', ['cat', '/www/index.html'])).toBe('hello from web\n');
  });

  it('lets a Pod reach the API server through the kubernetes Service with its ServiceAccount token', async () => {
    await applyAt(app, `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/read-pods`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'read-pods', namespace: NS },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    await applyAt(app, `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/read-pods`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'read-pods', namespace: NS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-pods' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: NS }],
    });
    // What in-cluster config reads: the Service's address from the environment, token, CA and namespace from the
    // mounted ServiceAccount volume. (busybox's wget does not check certificates; the CA is compared below.)
    const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
    const url = `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/namespaces/$(cat ${sa}/namespace)/pods/incluster`;
    // Section marks computed by the shell (`@@$((1))` prints `@@1`): the Pod's own JSON, printed first, holds the
    // command's text, never its output.
    await run(
      'incluster',
      `wget -q -O- --header "Authorization: Bearer $(cat ${sa}/token)" ${url}; echo; ` +
        `echo "@@$((1))"; wget -q -O- ${url} 2>&1; echo "@@$((2))"; cat ${sa}/ca.crt`,
      'Succeeded',
    );
    const [withToken, withoutToken, ca] = podOutput(appNode, NS, 'incluster').split(/^@@\d\n/m);
    const self = JSON.parse(withToken!.slice(withToken!.indexOf('{'))) as WireObject;
    expect([self.kind, self.metadata.name, self.metadata.namespace]).toEqual(['Pod', 'incluster', NS]);
    expect(withoutToken).toContain('403 Forbidden');
    expect(ca!.trim()).toBe(cps.clusters[APP]!.ca.trim());
    const pod = await getObject(app, `/api/v1/namespaces/${NS}/pods/incluster`);
    expect(pod?.spec?.serviceAccountName).toBe('default');
  }, 120_000);

  it('leaves no process, network namespace, mount or cgroup behind when stopped', async () => {
    const { netns, procs, runDir, cgroupDirs } = appNode;
    appNodeStopped = true;
    await appNode.stop();
    expect(procs.filter((p) => isAlive(p.pid)).map((p) => `${p.role} ${p.pid}`)).toEqual([]);
    expect(processesInNetns(netns)).toEqual([]);
    const mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .filter((l) => l.includes(runDir));
    expect(mounts).toEqual([]);
    expect(cgroupDirs.filter((d) => existsSync(d))).toEqual([]);
    expect(existsSync(join(runDir, 'containerd', 'root'))).toBe(false);
    // Other engineers' and files' nodes run at the same time: the machine's default paths are compared, not its mounts.
    expect(MACHINE_PATHS.filter((p) => existsSync(p))).toEqual(machinePathsBefore);
  }, 120_000);

  it('leaves nothing behind when the test runner is killed: its reaper sweeps the node, Pods included', async () => {
    const runner = spawn(
      process.execPath,
      [join(repoRoot(), 'scripts', 'run-ts.mjs'), join(repoRoot(), 'test', 'cluster', 'fixtures', 'hold-node.ts'), kubeBinaryPath()],
      { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      runner.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      runner.once('exit', (code) => reject(new Error(`the runner exited (${code}) before its node ran a Pod`)));
    });
    const held = JSON.parse(line) as { egressSocket: string; runDir: string; netns: string; cgroupDirs: string[]; pids: number[] };
    // Processes in the cgroup tree: the node's own, containerd's shims and the Pod's (pause and sleep).
    const inTree = () => held.cgroupDirs.flatMap((d) => (existsSync(d) ? cgroupProcs(d) : []));
    expect(inTree().length).toBeGreaterThan(held.pids.length);
    runner.kill('SIGKILL');
    await eventually('the reaper to finish', async () => (existsSync(join(held.runDir, 'finished')) ? true : undefined), 60_000);
    expect(readFileSync(join(held.runDir, 'finished'), 'utf8')).toContain('reaper');
    expect(inTree()).toEqual([]);
    expect(held.cgroupDirs.filter((d) => existsSync(d))).toEqual([]);
    expect(processesInNetns(held.netns)).toEqual([]);
    expect(
      readFileSync('/proc/mounts', 'utf8')
        .split('\n')
        .filter((l) => l.includes(held.runDir)),
    ).toEqual([]);
    expect(existsSync(join(held.runDir, 'containerd', 'root'))).toBe(false);
    expect(existsSync(held.egressSocket)).toBe(false);
  }, 240_000);
});

/**
 * GET `url` through the backend's Service from `clients` clients at once, each request from a new browser (a new
 * connection, so kube-proxy picks a replica for each), `everyMs` apart, until `stop()`: how many were answered 200, and
 * what failed, with the error.
 */
function requestStream(url: string, clients = 3, everyMs = 50): { stop(): Promise<{ answered: number; failures: string[] }> } {
  let stopped = false;
  let answered = 0;
  const failures: string[] = [];
  const client = async () => {
    while (!stopped) {
      const at = new Date().toISOString();
      try {
        const page = await new Browser({ ca: [backendCa] }).get(url, { follow: false });
        if (page.status === 200) answered++;
        else failures.push(`${at}: ${page.status} ${page.body.slice(0, 200)}`);
      } catch (e) {
        failures.push(`${at}: ${(e as Error).message}`);
      }
      await sleep(everyMs);
    }
  };
  const running = Array.from({ length: clients }, client);
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(running);
      return { answered, failures };
    },
  };
}

/** The backend's leader-election Lease (its default name) once a replica holds it. */
function leaderLease(): Promise<WireObject> {
  return eventually('a backend replica holding the leader Lease', async () => {
    const l = await getObject(cp, `/apis/coordination.k8s.io/v1/namespaces/${BACKEND_NAMESPACE}/leases/klutch-bind-backend`);
    return l?.spec?.holderIdentity ? l : undefined;
  });
}

const claimPath = (plural: string, ns: string, name: string) => `/apis/anynines.com/v1/namespaces/${ns}/${plural}/${name}`;

async function createClaim(plural: string, claim: WireObject): Promise<void> {
  await requireOk(app, 'POST', `/apis/anynines.com/v1/namespaces/${APP_NS}/${plural}`, claim);
}

/** The claim of `name` the konnector made on the control plane (in the consumer's namespace there). */
async function upstream(plural: string, name: string): Promise<WireObject> {
  const found = await eventually(`claim ${APP_NS}/${name} on the control plane`, async () => {
    const list = await requireOk(cp, 'GET', `/apis/anynines.com/v1/${plural}`);
    return (list.items as WireObject[]).find((o) => o.metadata.name === name && (!consumerNs || o.metadata.namespace === consumerNs));
  });
  consumerNs ??= found.metadata.namespace as string;
  return found;
}

/** The claims upstream (this app cluster's consumer namespace on the control plane): name → uid. */
async function upstreamClaims(): Promise<Map<string, string>> {
  if (!consumerNs) throw new Error('no claim of this app cluster reached the control plane yet');
  const list = await requireOk(cp, 'GET', `/apis/${PG.group}/v1/namespaces/${consumerNs}/${PG.resource}`);
  return new Map((list.items as WireObject[]).map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.uid]));
}

/**
 * A new claim in the app cluster reaches the control plane, and the status Crossplane writes there comes back down:
 * Synced, which Crossplane sets once it composed the claim (Ready waits for the data service; the first claim shows it).
 */
async function claimSyncs(name: string): Promise<void> {
  await createClaim(PG.resource, { ...examples.pg, metadata: { name, namespace: APP_NS } });
  const up = await upstream(PG.resource, name);
  await forClaim(PG.resource, up.metadata.namespace, name, `Synced of ${APP_NS}/${name} down in the app cluster`, async () => {
    const o = await getObject(app, claimPath(PG.resource, APP_NS, name));
    return condition(o, 'Synced') === 'True' ? o : undefined;
  });
}

/** What stands between a claim and its data service, for a failing wait: the claim, its composite, the Objects, and the logs of the function and provider Pods. */
async function claimReport(plural: string, ns: string, name: string): Promise<string> {
  const claim = await getObject(cp, claimPath(plural, ns, name));
  const xrs = ((await cp.request('GET', `/apis/anynines.com/v1/x${plural}`)).body?.items ?? []) as WireObject[];
  const objects = ((await cp.request('GET', '/apis/kubernetes.crossplane.io/v1alpha2/objects')).body?.items ?? []) as WireObject[];
  const warnings = ((await requireOk(cp, 'GET', '/api/v1/events?fieldSelector=type%3DWarning')).items as WireObject[]).map(
    (e) => `${e.involvedObject.kind}/${e.involvedObject.name}: ${e.reason}: ${e.message}`,
  );
  return (
    `claim ${ns}/${name} on the control plane: ${JSON.stringify({ spec: claim?.spec, status: claim?.status })}\n` +
    `composites: ${JSON.stringify(xrs.map((x) => ({ name: x.metadata.name, status: x.status })))}\n` +
    `Objects: ${JSON.stringify(objects.map((o) => ({ name: o.metadata.name, status: o.status })))}\n` +
    `Warning events:\n${[...new Set(warnings)].join('\n')}\n` +
    (await podFailure(cp, cpNode, CROSSPLANE_NAMESPACE, `pkg.crossplane.io/function=${DEPENDENCY_PACKAGES.function.name}`)) +
    (await podFailure(cp, cpNode, CROSSPLANE_NAMESPACE, `pkg.crossplane.io/provider=${DEPENDENCY_PACKAGES.providerKubernetes.name}`)) +
    (await podFailure(app, appNode, KONNECTOR_NS, 'app.kubernetes.io/name=konnector'))
  );
}

/** `eventually`, its error followed by claimReport of the claim upstream. */
function forClaim<T>(plural: string, ns: string, name: string, what: string, check: () => Promise<T | undefined>): Promise<T> {
  return eventually(what, check, 120_000).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await claimReport(plural, ns, name)}`);
  });
}
