/**
 * The platform's images without Docker (issue 18, deliverable 2; docs/decisions/images.md): the base image the
 * synthesized Dockerfiles name, made locally from registry packages, every deployable's image built by buildah from
 * the Dockerfile `npm run synth` writes, and those images run by a real kubelet: the synthesized konnector Deployment
 * (restricted securityContext, ServiceAccount token, probes) and the other three as Pods.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Exec, type V1Status } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BASE_IMAGE, DEPLOYABLES, IMAGE_USER } from '../../synth/deployables';
import { type ControlPlanes, startControlPlanes } from '../support/control-plane';
import { apply, synthOutputAsync } from '../support/crossplane';
import { applyAt, eventually, getObject, type Kube, kubeFor, requireOk, type WireObject } from '../support/kube';
import { type Node, startNode } from '../support/node/node';
import {
  CROSSPLANE_IMAGE,
  DEPLOYABLE_IMAGES,
  ensureBaseImage,
  ensureCrossplaneImages,
  ensureDeployableImages,
  PROVIDER_KUBERNETES_IMAGE,
} from '../support/node/platform-images';
import { crossplaneVersion } from '../tools/crossplane';
import { tail } from '../support/processes';
import { repoRoot } from '../support/root';
import { kubeBinaryPath } from '../tools/kube';
import { NODE_VERSION } from '../tools/node-runtime';

const CLUSTER = 'images';
const NS = 'images-test';
const KONNECTOR_NS = 'klutch-bind';
const log = (line: string) => process.stderr.write(`[klutch-kit] ${line}\n`);
let cp: ControlPlanes;
let node: Node;
let kube: Kube;
let dist: string;
let archives: Record<string, string>;
let goImages: { crossplane: string; providerKubernetes: string };

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'klutch-kit-images-'));
  await synthOutputAsync(dist);
  archives = await ensureDeployableImages(dist, log);
  goImages = await ensureCrossplaneImages(log);
  cp = await startControlPlanes({ clusters: [CLUSTER], binary: kubeBinaryPath(), pods: true });
  kube = kubeFor(cp.clusters[CLUSTER]!);
  // The deployables' images share the base layer: containerd stores it once.
  node = await startNode(cp.clusters[CLUSTER]!, { images: [...Object.values(archives), ...Object.values(goImages)] });
  await requireOk(kube, 'POST', '/api/v1/namespaces', {
    metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
  });
  await eventually('the default ServiceAccount of the test namespace', () =>
    getObject(kube, `/api/v1/namespaces/${NS}/serviceaccounts/default`),
  );
}, 45 * 60_000);

afterAll(async () => {
  await node?.stop();
  await cp?.stop();
  if (dist) rmSync(dist, { recursive: true, force: true });
}, 120_000);

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
        last = await getObject(kube, `/api/v1/namespaces/${ns}/pods/${name}`);
        return last && done(last) ? last : undefined;
      },
      120_000,
    );
  } catch (e) {
    const kubelet = node.procs.find((p) => p.role === 'kubelet')!;
    const logs = await kube.request('GET', `/api/v1/namespaces/${ns}/pods/${name}/log`);
    throw new Error(
      `${(e as Error).message}\nPod status: ${JSON.stringify(last?.status)}\nits log: ${String(logs.body?.message ?? JSON.stringify(logs.body))}\n` +
        `kubelet log ${kubelet.logPath}:\n${tail(kubelet.logPath, 15)}`,
    );
  }
}

const ready = (pod: WireObject) => (pod.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');

/** Runs `command` in a container through the API server (no shell in the images: node is the command). */
async function execIn(ns: string, pod: string, container: string, command: string[]): Promise<string> {
  let out = '';
  const stdout = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const status = await new Promise<V1Status>((resolve, reject) => {
    new Exec(kube.config).exec(ns, pod, container, command, stdout, stdout, null, false, resolve).catch(reject);
  });
  expect(status.status, `${command.join(' ')} in ${ns}/${pod}: ${JSON.stringify(status)}\n${out}`).toBe('Success');
  return out;
}

/** A one-container Pod of `image` with `args`, restricted as the synthesized Deployments are. */
function pod(name: string, image: string, args: string[], extra: WireObject = {}): Promise<WireObject> {
  return applyAt(kube, `/api/v1/namespaces/${NS}/pods/${name}`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'main', image, imagePullPolicy: 'Never', args, securityContext: RESTRICTED, ...extra }],
    },
  });
}

describe('images without Docker', () => {
  it('builds every deployable from the Dockerfile synth writes, on the base image made locally under the name it uses', async () => {
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
      expect(img.config.config.Entrypoint).toEqual(['/nodejs/bin/node', `/${d.name}/${d.name}.mjs`]);
      expect(Object.keys(img.config.config.ExposedPorts ?? {}).sort()).toEqual(d.ports.map((p) => `${p.port}/tcp`).sort());
    }
    // Built once: unchanged inputs reuse the archives.
    const mtimes = Object.values(archives).map((a) => statSync(a).mtimeMs);
    const again = await ensureDeployableImages(dist, log);
    expect(again).toEqual(archives);
    expect(Object.values(again).map((a) => statSync(a).mtimeMs)).toEqual(mtimes);
  }, 120_000);

  it('runs the function, backend and kubectl-bind images as restricted Pods on Node 24', async () => {
    // The function as Crossplane runs it, in plain gRPC (no Crossplane here to mount /tls/server), with its probe.
    await pod('function', DEPLOYABLE_IMAGES.function!, ['--insecure', '--address', ':9443', '--metrics-address', ':8080'], {
      readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 },
    });
    await pod('kubectl-bind', DEPLOYABLE_IMAGES['kubectl-bind']!, ['--version']);
    await pod('backend', DEPLOYABLE_IMAGES.backend!, ['--help']);
    // Klutch's manifests start their backend as /ko-app/example-backend: the image's script there runs the bundle.
    await pod('backend-klutch-path', DEPLOYABLE_IMAGES.backend!, ['--help'], { command: ['/ko-app/example-backend'] });
    const fn = await podUntil(NS, 'function', 'Ready', ready);
    expect(fn.status.containerStatuses[0].image).toBe(DEPLOYABLE_IMAGES.function);
    const version = await execIn(NS, 'function', 'main', ['/nodejs/bin/node', '-p', 'process.version']);
    expect(version.trim()).toBe(`v${NODE_VERSION}`);
    for (const name of ['kubectl-bind', 'backend', 'backend-klutch-path']) {
      await podUntil(NS, name, 'Succeeded', (p) => {
        if (p.status?.phase === 'Failed') throw new Error(`${name} failed: ${JSON.stringify(p.status)}`);
        return p.status?.phase === 'Succeeded';
      });
    }
    const cli = await kube.request('GET', `/api/v1/namespaces/${NS}/pods/kubectl-bind/log`);
    expect(String(cli.body.message)).toContain('kubectl-bind v0.1.0');
    const backend = await kube.request('GET', `/api/v1/namespaces/${NS}/pods/backend/log`);
    expect(String(backend.body.message)).toContain('Usage: node backend.mjs');
    const klutchPath = await kube.request('GET', `/api/v1/namespaces/${NS}/pods/backend-klutch-path/log`);
    expect(String(klutchPath.body.message)).toBe(String(backend.body.message));
  }, 180_000);

  it('runs Crossplane core and provider-kubernetes from images of their Go builds, as their Dockerfiles lay them out', async () => {
    const files = (archive: string) => {
      const { manifest } = image(archive);
      const top = manifest.layers[manifest.layers.length - 1].digest.slice(7);
      return spawnSync('sh', ['-c', `tar xOf "$0" blobs/sha256/${top} | tar tz`, archive], { encoding: 'utf8', maxBuffer: 64 << 20 })
        .stdout;
    };
    expect(image(goImages.crossplane).name).toBe(CROSSPLANE_IMAGE);
    expect(image(goImages.crossplane).config.config.Entrypoint).toEqual(['/usr/local/bin/crossplane']);
    // What `crossplane core init` installs, where it reads it.
    expect(files(goImages.crossplane)).toMatch(/^crds\/apiextensions\.crossplane\.io_compositions\.yaml$/m);
    expect(files(goImages.crossplane)).toMatch(/^webhookconfigurations\//m);
    expect(image(goImages.providerKubernetes).name).toBe(PROVIDER_KUBERNETES_IMAGE);
    await pod('crossplane', CROSSPLANE_IMAGE, ['--version']);
    await pod('provider-kubernetes', PROVIDER_KUBERNETES_IMAGE, ['--help']);
    for (const name of ['crossplane', 'provider-kubernetes']) {
      await podUntil(NS, name, 'Succeeded', (p) => {
        if (p.status?.phase === 'Failed') throw new Error(`${name} failed: ${JSON.stringify(p.status)}`);
        return p.status?.phase === 'Succeeded';
      });
    }
    const version = await kube.request('GET', `/api/v1/namespaces/${NS}/pods/crossplane/log`);
    expect(String(version.body.message).trim()).toBe(crossplaneVersion('v2'));
    const help = await kube.request('GET', `/api/v1/namespaces/${NS}/pods/provider-kubernetes/log`);
    expect(String(help.body.message)).toContain('usage: crossplane-kubernetes-provider');
  }, 120_000);

  it("runs Klutch's own konnector manifests with only the image replaced by ours: both replicas Ready on /healthz, one leads", async () => {
    // test/fixtures/klutch-bind-deploy/konnector/: Klutch's Namespace, `*/*/*` ClusterRole and binding, ServiceAccount
    // and Deployment (selector app: konnector, no arguments, POD_NAME/POD_NAMESPACE, readiness /healthz on 8080).
    const fixtures = join(repoRoot(), 'test', 'fixtures', 'klutch-bind-deploy', 'konnector');
    const docs = readdirSync(fixtures)
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .flatMap((f) => parseAllDocuments(readFileSync(join(fixtures, f), 'utf8')).map((d) => d.toJS() as WireObject));
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    expect(deployment.spec.template.spec.containers[0].image).toBe('IMAGE');
    deployment.spec.template.spec.containers[0].image = DEPLOYABLE_IMAGES.konnector;
    for (const d of docs) await apply(kube, d as never);
    const path = `/apis/apps/v1/namespaces/${KONNECTOR_NS}/deployments/konnector`;
    try {
      await eventually(
        "Klutch's konnector Deployment to have 2 ready replicas",
        async () => {
          const d = await getObject(kube, path);
          return d?.status?.readyReplicas === 2 ? d : undefined;
        },
        180_000,
      );
      const lease = await eventually('a replica holding the Lease', async () => {
        const l = await getObject(kube, `/apis/coordination.k8s.io/v1/namespaces/${KONNECTOR_NS}/leases/klutch-bind`);
        return l?.spec?.holderIdentity ? l : undefined;
      });
      const pods = (await requireOk(kube, 'GET', `/api/v1/namespaces/${KONNECTOR_NS}/pods?labelSelector=app%3Dkonnector`))
        .items as WireObject[];
      expect(pods.map((p) => p.metadata.name)).toContain(lease.spec.holderIdentity);
    } finally {
      // The next test applies the synthesized konnector under the same name, with another (immutable) selector.
      await kube.request('DELETE', `${path}?propagationPolicy=Foreground`);
      await eventually("Klutch's konnector Deployment gone", async () => ((await getObject(kube, path)) ? undefined : true), 120_000);
    }
  });

  it('runs the synthesized konnector Deployment as a kubelet runs it: restricted, with its ServiceAccount token, probes Ready', async () => {
    const docs = parseAllDocuments(readFileSync(join(dist, 'app-cluster', 'konnector', 'konnector.yaml'), 'utf8')).map(
      (d) => d.toJS() as WireObject,
    );
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    const container = deployment.spec.template.spec.containers[0];
    expect(container.image).toBe(DEPLOYABLE_IMAGES.konnector);
    // The image is on the node, not in a registry: the only change to the shipped manifest.
    container.imagePullPolicy = 'Never';
    for (const d of docs) await apply(kube, d as never);
    const replicas = deployment.spec.replicas as number;
    await eventually(
      `Deployment ${KONNECTOR_NS}/konnector to have ${replicas} ready replicas`,
      async () => {
        const d = await getObject(kube, `/apis/apps/v1/namespaces/${KONNECTOR_NS}/deployments/konnector`);
        return d?.status?.readyReplicas === replicas && d?.status?.availableReplicas === replicas ? d : undefined;
      },
      180_000,
    ).catch(async (e: Error) => {
      const pods = await kube.request('GET', `/api/v1/namespaces/${KONNECTOR_NS}/pods`);
      const kubelet = node.procs.find((p) => p.role === 'kubelet')!;
      throw new Error(
        `${e.message}\nPods: ${JSON.stringify(((pods.body as WireObject).items ?? []).map((p: WireObject) => ({ name: p.metadata.name, status: p.status })))}\n` +
          `kubelet log ${kubelet.logPath}:\n${tail(kubelet.logPath, 15)}`,
      );
    });
    const selector = Object.entries(deployment.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = (await requireOk(kube, 'GET', `/api/v1/namespaces/${KONNECTOR_NS}/pods?labelSelector=${encodeURIComponent(selector)}`))
      .items;
    expect(pods).toHaveLength(replicas);
    const pod = pods[0] as WireObject;
    expect(ready(pod)).toBe(true);
    // The namespace enforces Pod Security `restricted` (its label in konnector.yaml), so the replicas passed it: the
    // same image without the Deployment's securityContext is refused.
    const refused = await kube.request('POST', `/api/v1/namespaces/${KONNECTOR_NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'unrestricted' },
      spec: { containers: [{ name: 'main', image: DEPLOYABLE_IMAGES.konnector, imagePullPolicy: 'Never' }] },
    });
    expect(refused.code, JSON.stringify(refused.body)).toBe(403);
    expect(String(refused.body.message)).toContain('violates PodSecurity "restricted:latest"');
    expect(pod.spec.serviceAccountName).toBe('konnector');

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
    const seen = JSON.parse(await execIn(KONNECTOR_NS, pod.metadata.name, 'konnector', ['/nodejs/bin/node', '-e', probe]));
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
    const lease = await eventually('the konnector Lease to be held by one of its Pods', async () => {
      const l = await getObject(kube, `/apis/coordination.k8s.io/v1/namespaces/${KONNECTOR_NS}/leases/klutch-bind`);
      return pods.some((p: WireObject) => p.metadata.name === l?.spec?.holderIdentity) ? l : undefined;
    });
    const leader = await kube.request('GET', `/api/v1/namespaces/${KONNECTOR_NS}/pods/${lease.spec.holderIdentity}/log`);
    expect(String(leader.body.message)).toContain('serving /healthz, /readyz and /metrics');
    // Its readiness answers from inside the Pod network, as the kubelet's probe does.
    const readyz = node.exec('/bin/busybox', ['wget', '-q', '-O-', `http://${pod.status.podIP}:8080/readyz`]);
    expect(readyz.code, readyz.output).toBe(0);
  }, 300_000);
});
