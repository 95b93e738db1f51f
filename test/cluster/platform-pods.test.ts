/**
 * The platform as an operator deploys it (issue 18 items 2-4; docs/decisions/crossplane-deployed.md, images.md): on a
 * `pods` cluster with a real node, a registry of the run's own (TLS from the run's CA) holds the images built from the
 * synthesized Dockerfiles and the Crossplane packages `crossplane xpkg build/push` made; Crossplane core runs from its
 * Helm chart as a Deployment, installs our Configuration FROM THE REGISTRY, resolves its dependencies and starts our
 * function and provider-kubernetes as the Pods it makes; an a8s claim goes Ready and gets its `<claim>-creds`. The
 * images' own checks (made from the Dockerfiles on the local base image; the konnector as a restricted Deployment)
 * run here too, on the same node, pulling from the registry.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Exec, type V1Status } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { BASE_IMAGE, DEPLOYABLES, IMAGE_USER } from '../../synth/deployables';
import { type ControlPlanes, startControlPlanes } from '../support/control-plane';
import { apply, condition, CONFIGURATION_PACKAGE, CROSSPLANE_NAMESPACE, synthOutputAsync } from '../support/crossplane';
import { applyAt, eventually, getObject, type Kube, kubeFor, requireOk, type WireObject } from '../support/kube';
import { type Node, startNode } from '../support/node/node';
import {
  CROSSPLANE_IMAGE,
  DEPLOYABLE_IMAGES,
  ensureBaseImage,
  ensureDeployableImages,
  PROVIDER_KUBERNETES_IMAGE,
} from '../support/node/platform-images';
import { status } from '../support/node/registry';
import { tail } from '../support/processes';
import { repoRoot } from '../support/root';
import { DEPENDENCY_PACKAGES, deploymentAvailable } from '../support/platform/crossplane-deployed';
import { listPods, podFailure, podTable } from '../support/platform/pods';
import { mirrored } from '../support/platform/push';
import { type PlatformOnPods, PROVIDER_ANYNINES_STAND_IN, startPlatformOnPods } from '../support/platform/platform-on-pods';
import { A8sOperatorsStandIn } from '../support/stand-ins/a8s-operators';
import { crossplaneVersion } from '../tools/crossplane';
import { kubeBinaryPath } from '../tools/kube';
import { NODE_VERSION } from '../tools/node-runtime';

const CLUSTER = 'platform-pods';
const NS = 'images-test';
const KONNECTOR_NS = 'klutch-bind';
const log = (line: string) => process.stderr.write(`[klutch-kit] ${line}\n`);
let cp: ControlPlanes;
let node: Node;
let kube: Kube;
let dist: string;
let platform: PlatformOnPods;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'klutch-kit-platform-pods-'));
  await synthOutputAsync(dist);
  cp = await startControlPlanes({ clusters: [CLUSTER], binary: kubeBinaryPath(), pods: true });
  kube = kubeFor(cp.clusters[CLUSTER]!);
  node = await startNode(cp.clusters[CLUSTER]!, { log });
  platform = await startPlatformOnPods(cp.clusters[CLUSTER]!, node, dist, { log });
  await requireOk(kube, 'POST', '/api/v1/namespaces', {
    metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
  });
  await eventually('the default ServiceAccount of the test namespace', () =>
    getObject(kube, `/api/v1/namespaces/${NS}/serviceaccounts/default`),
  );
}, 45 * 60_000);

afterAll(async () => {
  if (kube) log(`Pods of the cluster at the end:\n${podTable(await listPods(kube).catch(() => []))}`);
  await platform?.close();
  await node?.stop();
  await cp?.stop();
  if (dist) rmSync(dist, { recursive: true, force: true });
}, 120_000);

const ready = (pod: WireObject) => (pod.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');

/** The first Pod matching `selector` in `ns` once `done` holds for it; the error names the Pods and their logs. */
async function podWhere(ns: string, selector: string, what: string, done: (p: WireObject) => boolean, ms = 120_000): Promise<WireObject> {
  return eventually(`a Pod ${selector} in ${ns} ${what}`, async () => (await listPods(kube, ns, selector)).find(done), ms).catch(
    async (e: Error) => {
      throw new Error(`${e.message}\n${await podFailure(kube, node, ns, selector)}`);
    },
  );
}

describe('the registry of the run', () => {
  it('serves over TLS with a certificate of the run CA, and no other client trusts it', async () => {
    expect(platform.registry.host).toBe(`${node.ip}:5000`);
    expect(await status(`https://${platform.registry.hostFromTest}/v2/`, platform.registry.ca)).toBe(200);
    // The machine's CAs do not know it: a client without the run's CA is refused at the handshake.
    const other = spawnSync(
      process.execPath,
      [
        '-e',
        `fetch('https://${platform.registry.hostFromTest}/v2/').then(() => process.exit(0), (e) => { console.log(e.cause?.code); process.exit(1); })`,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(other.status).toBe(1);
    expect(other.stdout.trim()).toMatch(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
  });

  it('holds the images and the packages under their public paths', async () => {
    const r = spawnSync(
      process.execPath,
      ['-e', `fetch('https://${platform.registry.hostFromTest}/v2/_catalog').then((r) => r.text()).then(console.log)`],
      {
        encoding: 'utf8',
        env: { ...process.env, NODE_EXTRA_CA_CERTS: platform.registry.caFile },
      },
    );
    const repositories = (JSON.parse(r.stdout) as { repositories: string[] }).repositories;
    expect(repositories.sort()).toEqual(
      [
        'anynines/provider-anynines',
        'crossplane-contrib/provider-kubernetes',
        'crossplane/crossplane',
        'function',
        'klutch-kit/anynines-dataservices',
        'klutch-kit/bind-backend',
        'klutch-kit/function-dataservices',
        'klutch-kit/konnector',
        'kubectl-bind',
        'pause',
      ].sort(),
    );
    expect(platform.images[CROSSPLANE_IMAGE]).toBe(mirrored(platform.registry.host, CROSSPLANE_IMAGE));
  });
});

describe('Crossplane as deployed', () => {
  it('runs core from its Helm chart as a Deployment whose Pod the kubelet pulled from the registry', async () => {
    await deploymentAvailable(kube, node, CROSSPLANE_NAMESPACE, 'crossplane', 'app=crossplane');
    const pod = await podWhere(CROSSPLANE_NAMESPACE, 'app=crossplane', 'Ready', ready);
    expect(pod.metadata.labels['app.kubernetes.io/managed-by']).toBe('Helm');
    expect(pod.spec.containers[0].image).toBe(`${platform.registry.host}/crossplane/crossplane:${crossplaneVersion('v2')}`);
    expect(pod.spec.initContainers[0].args.slice(0, 2)).toEqual(['core', 'init']);
    // The kubelet pulled it (nothing was imported into containerd but pause and busybox).
    const events = await requireOk(
      kube,
      'GET',
      `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${pod.metadata.name},reason=Pulled`)}`,
    );
    expect(events.items.map((e: WireObject) => e.message).join('\n')).toContain(
      `Successfully pulled image "${pod.spec.containers[0].image}"`,
    );
    const images = node.exec('ctr', [
      '--address',
      join(node.runDir, 'containerd', 'containerd.sock'),
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
    const config = await getObject(kube, '/apis/pkg.crossplane.io/v1/configurations/anynines-dataservices');
    expect(config!.spec.package).toBe(CONFIGURATION_PACKAGE);
    expect(condition(config, 'Healthy'), JSON.stringify(config?.status)).toBe('True');
    expect(config!.status.resolvedPackage).toBe(mirrored(platform.registry.host, CONFIGURATION_PACKAGE));
    for (const p of Object.values(DEPENDENCY_PACKAGES)) {
      const pkg = await getObject(kube, `/apis/pkg.crossplane.io/v1/${p.plural}/${p.name}`);
      expect(condition(pkg, 'Healthy'), `${p.kind} ${p.name}`).toBe('True');
      // The install bundle's Function and Provider, and the stand-in the resolver installed: pulled from the mirror.
      expect(pkg!.status.resolvedPackage.startsWith(`${platform.registry.host}/`), JSON.stringify(pkg!.status)).toBe(true);
    }
    const stand = await getObject(kube, `/apis/pkg.crossplane.io/v1/providers/${DEPENDENCY_PACKAGES.providerAnynines.name}`);
    expect(stand!.spec.package).toMatch(new RegExp(`^${PROVIDER_ANYNINES_STAND_IN.split(':')[0]}`));
    // Healthy comes when the package's objects are applied; the XRDs offer their claims a little later.
    await eventually('the PostgresqlInstance XRD to offer its claim', async () => {
      const xrd = await getObject(
        kube,
        '/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xpostgresqlinstances.anynines.com',
      );
      return condition(xrd, 'Offered') === 'True' ? xrd : undefined;
    });
  });

  it('starts our function and provider-kubernetes as Pods it made, from the images embedded in their packages', async () => {
    for (const p of [DEPENDENCY_PACKAGES.function, DEPENDENCY_PACKAGES.providerKubernetes]) {
      const pod = await podWhere(CROSSPLANE_NAMESPACE, `pkg.crossplane.io/${p.kind.toLowerCase()}=${p.name}`, 'Ready', ready);
      const rs = await getObject(
        kube,
        `/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/replicasets/${pod.metadata.ownerReferences[0].name}`,
      );
      const deployment = await getObject(
        kube,
        `/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments/${rs!.metadata.ownerReferences[0].name}`,
      );
      expect(deployment!.metadata.ownerReferences[0].kind).toBe(`${p.kind}Revision`);
      expect(pod.spec.containers[0].image.startsWith(`${platform.registry.host}/`)).toBe(true);
    }
  });
});

/** What stands between a claim and its data service, for a failing wait: the claim, its composite, the Objects, and the logs of the function and provider Pods. */
async function claimReport(plural: string, ns: string, name: string): Promise<string> {
  const claim = await getObject(kube, `/apis/anynines.com/v1/namespaces/${ns}/${plural}/${name}`);
  const xrs = ((await kube.request('GET', `/apis/anynines.com/v1/x${plural}`)).body?.items ?? []) as WireObject[];
  const objects = ((await kube.request('GET', '/apis/kubernetes.crossplane.io/v1alpha2/objects')).body?.items ?? []) as WireObject[];
  const warnings = ((await requireOk(kube, 'GET', '/api/v1/events?fieldSelector=type%3DWarning')).items as WireObject[]).map(
    (e) => `${e.involvedObject.kind}/${e.involvedObject.name}: ${e.reason}: ${e.message}`,
  );
  return (
    `claim ${ns}/${name}: ${JSON.stringify({ spec: claim?.spec, status: claim?.status })}\n` +
    `composites: ${JSON.stringify(xrs.map((x) => ({ name: x.metadata.name, status: x.status })))}\n` +
    `Objects: ${JSON.stringify(objects.map((o) => ({ name: o.metadata.name, status: o.status })))}\n` +
    `Warning events:\n${[...new Set(warnings)].join('\n')}\n` +
    (await podFailure(kube, node, CROSSPLANE_NAMESPACE, `pkg.crossplane.io/function=${DEPENDENCY_PACKAGES.function.name}`)) +
    (await podFailure(kube, node, CROSSPLANE_NAMESPACE, `pkg.crossplane.io/provider=${DEPENDENCY_PACKAGES.providerKubernetes.name}`))
  );
}

/** `eventually`, its error followed by claimReport. */
function forClaim<T>(plural: string, ns: string, name: string, what: string, check: () => Promise<T | undefined>): Promise<T> {
  return eventually(what, check, 120_000).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await claimReport(plural, ns, name)}`);
  });
}

describe('a claim on the Pod-based Crossplane', () => {
  it('an a8s PostgresqlInstance goes Ready, and its ServiceBinding brings <claim>-creds', async () => {
    const a8s = new A8sOperatorsStandIn(kube);
    await a8s.installCrds();
    const examples = join(dist, 'packages', 'dataservices', 'examples');
    const claim = parse(readFileSync(join(examples, 'postgresql-a8s.yaml'), 'utf8')) as WireObject;
    const binding = parse(readFileSync(join(examples, 'servicebinding-a8s.yaml'), 'utf8')) as WireObject;
    await apply(kube, claim);
    const ns = claim.metadata.namespace ?? 'default';
    const pg = (what: string, check: () => Promise<unknown>) => forClaim('postgresqlinstances', ns, claim.metadata.name, what, check);
    await pg('the a8s Postgresql', () => a8s.postgresqlRunning(ns, claim.metadata.name).then(() => true));
    await pg(`claim ${claim.metadata.name} Ready`, async () => {
      const c = await getObject(kube, `/apis/anynines.com/v1/namespaces/${ns}/postgresqlinstances/${claim.metadata.name}`);
      return condition(c, 'Ready') === 'True' ? c : undefined;
    });
    await apply(kube, binding);
    const bns = binding.metadata.namespace ?? 'default';
    const credentials = {
      database: 'example',
      instance_service: `${claim.metadata.name}-master.${ns}`,
      password: 's3cr3t',
      username: 'a8s-user',
    };
    // The stand-in acts once provider-kubernetes made the a8s ServiceBinding.
    const sb = (what: string, check: () => Promise<WireObject | undefined>) =>
      forClaim('servicebindings', bns, binding.metadata.name, what, check);
    await sb('the a8s ServiceBinding', () => a8s.bindingImplemented(bns, binding.metadata.name, credentials).then(() => ({})));
    const secret = await sb(`Secret ${bns}/${binding.metadata.name}-creds with data`, async () => {
      const s = await getObject(kube, `/api/v1/namespaces/${bns}/secrets/${binding.metadata.name}-creds`);
      return Object.keys(s?.data ?? {}).length > 0 ? s : undefined;
    });
    expect(
      Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])),
    ).toEqual(credentials);
  }, 300_000);
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
    const mtimes = Object.values(archives).map((a) => statSync(a).mtimeMs);
    const again = await ensureDeployableImages(dist, log);
    expect(again).toEqual(archives);
    expect(Object.values(again).map((a) => statSync(a).mtimeMs)).toEqual(mtimes);
  }, 120_000);

  it('runs the backend and kubectl-bind images as restricted Pods, and the function Pod Crossplane made on Node 24', async () => {
    await pod('kubectl-bind', platform.images[DEPLOYABLE_IMAGES['kubectl-bind']!]!, ['--version']);
    await pod('backend', platform.images[DEPLOYABLE_IMAGES.backend!]!, ['--help']);
    // Klutch's manifests start their backend as /ko-app/example-backend: the image's script there runs the bundle.
    await pod('backend-klutch-path', platform.images[DEPLOYABLE_IMAGES.backend!]!, ['--help'], { command: ['/ko-app/example-backend'] });
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
    const fn = await podWhere(CROSSPLANE_NAMESPACE, `pkg.crossplane.io/function=${DEPENDENCY_PACKAGES.function.name}`, 'Ready', ready);
    const version = await execIn(CROSSPLANE_NAMESPACE, fn.metadata.name, fn.spec.containers[0].name, [
      '/nodejs/bin/node',
      '-p',
      'process.version',
    ]);
    expect(version.trim()).toBe(`v${NODE_VERSION}`);
  }, 180_000);

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
    deployment.spec.template.spec.containers[0].image = platform.images[DEPLOYABLE_IMAGES.konnector!];
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
});
