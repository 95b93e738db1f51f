/**
 * The bind pieces as an operator deploys them (issue 18, items 5 and 7): on a control plane with a node of its own, the
 * install bundle `npm run synth` writes (dist/control-plane/kustomization.yaml) applied with `kubectl apply -k` from an
 * overlay that sets only its documented knobs; the backend runs as Pods of its image and is reached through its
 * Service; in an app cluster with a node of its own the konnector runs as Pods of its image, first from the shipped
 * YAML, then `kubectl bind` over it, and syncs claims. Then the operations: a konnector image rollout with no claim
 * lost, the backend's leader Pod deleted in the middle of a bind, and the konnector's probes failing while its API
 * server is unreachable and recovering.
 *
 * The network (the workplace rule: only loopback and the run's own namespaces): each node lives in a network namespace
 * of the run. The OpenID provider stays on the host's loopback and is bridged into the control plane's node at the
 * node's address (exposeHostPort), which is its issuer URL; the test's browser reaches that address through a bridge
 * into the node (node.forward). The control plane's API server is bridged into the app cluster's node the same way:
 * that is the external address consumers' kubeconfigs name. The test process reaches the backend's Service through
 * node.forward, on the port its public URL names.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { Exec, type V1Status } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { IMAGE_USER } from '../../synth/deployables';
import { BACKEND_CLIENT, installClaimApi, newKey } from '../support/bind-backend';
import { Browser } from '../support/browser';
import { headlessLogin, startCli, type CliRun } from '../support/cli';
import { type ControlPlanes, startControlPlanes } from '../support/control-plane';
import { initCore, installCrds, synthOutputAsync } from '../support/crossplane';
import { eventually, getObject, type Kube, kubeFor, requireOk, type WireObject } from '../support/kube';
import { exposeHostPort, type HostPort } from '../support/node/host-port';
import { type Node, startNode } from '../support/node/node';
import { DEPLOYABLE_IMAGES, ensureDeployableImages } from '../support/node/platform-images';
import { startOidcProvider, type OidcTestProvider } from '../support/oidc';
import { createCa } from '../support/pki';
import { freePorts, tail } from '../support/processes';
import { repoRoot } from '../support/root';
import { goModuleSource, wrapperModule } from '../tools/go';
import { kubeBinaryPath } from '../tools/kube';
import { PROVIDER_KUBERNETES_VERSION } from '../tools/provider-kubernetes';

const CP = 'bindpods';
const APP = 'bindapp';
const BACKEND_NS = 'klutch-bind-backend';
const KONNECTOR_NS = 'klutch-bind';
const APP_NS = 'shop';
const PG = { resource: 'postgresqlinstances', group: 'anynines.com' };
/** A step of the suite: Pods start, roll and recover in it. */
const STEP = 240_000;
const log = (line: string) => process.stderr.write(`[klutch-kit] ${line}\n`);

let dir: string;
let cps: ControlPlanes;
let cpNode: Node;
let appNode: Node;
let cp: Kube;
let app: Kube;
let idp: OidcTestProvider;
let backendCa: string;
const closers: (() => Promise<void>)[] = [];
/** The backend's public URL: `https://127.0.0.1:<port>`, a listener of the test process in front of its Service. */
let publicUrl: string;
/** How the browser reaches the issuer's address inside the control plane's node. */
let idpRoute: { host: string; port: number };
/** Where kubectl bind on the host reaches the control plane's external address (the app node's bridge to it). */
let hostRoutes: Record<string, number>;

/** `kubectl <args>` (the test/kube binary's kubectl mode, as an operator types it) against `cluster`'s admin kubeconfig. */
function kubectl(cluster: string, args: readonly string[]): { code: number; out: string } {
  const r = spawnSync(kubeBinaryPath(), ['kubectl', `--kubeconfig=${cps.clusters[cluster]!.kubeconfig}`, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/** A listener on the host's 127.0.0.1:`port` piping to 127.0.0.1:`to` (a node.forward port), so a URL can be fixed first. */
async function listenAt(port: number, to: () => number): Promise<() => Promise<void>> {
  const open = new Set<Socket>();
  const server: Server = createServer((c) => {
    const u = createConnection({ host: '127.0.0.1', port: to() });
    for (const s of [c, u]) {
      open.add(s);
      s.once('close', () => open.delete(s));
      s.on('error', () => (s === c ? u : c).destroy());
    }
    c.pipe(u);
    u.pipe(c);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return async () => {
    for (const s of open) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
}

/** The Pods of a Deployment's current selector, each with its readiness; the error names the Pods and their logs. */
async function deploymentReady(
  kube: Kube,
  node: Node,
  ns: string,
  name: string,
  replicas: number,
  timeoutMs = 120_000,
): Promise<WireObject> {
  const path = `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
  try {
    return await eventually(
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
      timeoutMs,
    );
  } catch (e) {
    const pods = (await requireOk(kube, 'GET', `/api/v1/namespaces/${ns}/pods`)).items as WireObject[];
    const lines = pods.map((p) => {
      const logs = node.podLogs(ns, p.metadata.name);
      return `${p.metadata.name}: ${JSON.stringify(p.status?.containerStatuses ?? p.status)}\n  logs in ${logs}`;
    });
    const kubelet = node.procs.find((p) => p.role === 'kubelet')!;
    throw new Error(`${(e as Error).message}\n${lines.join('\n')}\nkubelet log ${kubelet.logPath}:\n${tail(kubelet.logPath, 10)}`);
  }
}

/** Runs `command` in a container through the API server (no shell in the images: node is the command). */
async function execIn(kube: Kube, ns: string, pod: string, container: string, command: string[]): Promise<string> {
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

const ready = (p: WireObject) => (p.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');
const pods = async (kube: Kube, ns: string, selector: string) =>
  (await requireOk(kube, 'GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`)).items as WireObject[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-bind-pods-'));
  const dist = join(dir, 'dist');
  await synthOutputAsync(dist);
  const images = await ensureDeployableImages(dist, log);
  cps = await startControlPlanes({ clusters: [CP, APP], binary: kubeBinaryPath(), pods: true });
  cp = kubeFor(cps.clusters[CP]!);
  app = kubeFor(cps.clusters[APP]!);
  [cpNode, appNode] = await Promise.all([
    startNode(cps.clusters[CP]!, { images: [images.backend!] }),
    startNode(cps.clusters[APP]!, { name: 'app-node', podCidr: '10.244.1.0/24', images: [images.konnector!] }),
  ]);

  // The OpenID provider on the host, its issuer at the control plane node's address (bridged there).
  const [idpPort, publicPort] = (await freePorts(2)) as [number, number];
  publicUrl = `https://127.0.0.1:${publicPort}`;
  idp = await startOidcProvider({
    issuerHost: cpNode.ip,
    port: idpPort,
    clients: [{ ...BACKEND_CLIENT, redirectUris: [`${publicUrl}/callback`] }],
    users: [{ sub: 'alice' }],
    logDir: join(dir, 'oidc'),
  });
  closers.push(() => idp.stop());
  const idpBridge = await exposeHostPort(cpNode, idpPort);
  closers.push(idpBridge.close);
  const idpForward = await cpNode.forward(cpNode.ip, idpPort);
  closers.push(idpForward.close);
  idpRoute = { host: '127.0.0.1', port: idpForward.port };
  // The control plane's API server where the app cluster's konnector reaches it: the consumers' external address.
  const cpPort = Number(new URL(cps.clusters[CP]!.server).port);
  const apiBridge: HostPort = await exposeHostPort(appNode, cpPort);
  closers.push(apiBridge.close);
  hostRoutes = { [apiBridge.address]: cpPort };

  // What an operator has before the bundle: Crossplane (its CRDs, namespace), provider-anynines' and provider-kubernetes' CRDs.
  await initCore(cp, goModuleSource(wrapperModule('test/tools/crank-v2'), 'github.com/crossplane/crossplane/v2', 'v2.2.1'));
  await installCrds(cp, join(repoRoot(), 'schemas', 'provider-anynines'));
  const pk = goModuleSource(
    wrapperModule('test/tools/provider-kubernetes'),
    'github.com/crossplane-contrib/provider-kubernetes',
    PROVIDER_KUBERNETES_VERSION,
  );
  // Only its ProviderConfig CRD: its Object CRDs convert through the provider's webhook, which is not running here.
  mkdirSync(join(dir, 'provider-kubernetes-crds'));
  copyFileSync(
    join(pk, 'package', 'crds', 'kubernetes.crossplane.io_providerconfigs.yaml'),
    join(dir, 'provider-kubernetes-crds', 'pc.yaml'),
  );
  await installCrds(cp, join(dir, 'provider-kubernetes-crds'));

  // The operator's overlay: only the bundle's documented knobs (docs/install-bundle.md).
  const ca = await createCa('bind-pods backend CA');
  backendCa = ca.cert;
  const tls = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
  const overlay = join(dir, 'overlay');
  mkdirSync(overlay);
  writeFileSync(join(overlay, 'tls.crt'), tls.cert);
  writeFileSync(join(overlay, 'tls.key'), tls.key);
  writeFileSync(join(overlay, 'oidc-ca.crt'), idp.ca);
  writeFileSync(join(dir, 'backend-ca.crt'), ca.cert);
  writeFileSync(
    join(overlay, 'kustomization.yaml'),
    stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [relative(overlay, join(dist, 'control-plane'))],
      configMapGenerator: [
        {
          name: 'klutch-bind-backend-settings',
          namespace: BACKEND_NS,
          behavior: 'merge',
          literals: [
            `BACKEND_OIDC_ISSUER_URL=${idp.issuer}`,
            `BACKEND_OIDC_CALLBACK_URL=${publicUrl}/callback`,
            `BACKEND_EXTERNAL_ADDRESS=https://${apiBridge.address}`,
            'BACKEND_EXTERNAL_SERVER_NAME=kubernetes.default.svc',
            'BACKEND_OIDC_CA_FILE=/etc/klutch-bind/oidc-ca/ca.crt',
          ],
        },
        { name: 'oidc-ca', namespace: BACKEND_NS, files: ['ca.crt=oidc-ca.crt'] },
      ],
      secretGenerator: [
        { name: 'oidc-client', namespace: BACKEND_NS, literals: [`client-secret=${BACKEND_CLIENT.clientSecret}`] },
        { name: 'cookie-keys', namespace: BACKEND_NS, literals: [`keys=${newKey()}`] },
        { name: 'klutch-bind-backend-tls', namespace: BACKEND_NS, type: 'kubernetes.io/tls', files: ['tls.crt', 'tls.key'] },
      ],
      // The issuer's CA, which no public root signs here: the documented patch.
      patches: [
        {
          target: { kind: 'Deployment', name: 'klutch-bind-backend' },
          patch: stringify({
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'klutch-bind-backend', namespace: BACKEND_NS },
            spec: {
              template: {
                spec: {
                  volumes: [{ name: 'oidc-ca', configMap: { name: 'oidc-ca' } }],
                  containers: [
                    { name: 'backend', volumeMounts: [{ name: 'oidc-ca', mountPath: '/etc/klutch-bind/oidc-ca', readOnly: true }] },
                  ],
                },
              },
            },
          }),
        },
      ],
    }),
  );
  // The documented install: apply, wait for the bundle's CRDs, apply again (a kind a CRD of the same apply defines is
  // not known yet when kubectl maps the objects).
  const first = kubectl(CP, ['apply', '-k', overlay, '--server-side']);
  if (first.code !== 0) {
    const wait = kubectl(CP, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '-l', 'app.kubernetes.io/part-of=klutch-kit']);
    expect(wait.code, `${first.out}\n${wait.out}`).toBe(0);
    const second = kubectl(CP, ['apply', '-k', overlay, '--server-side']);
    expect(second.code, `${first.out}\n${second.out}`).toBe(0);
  }
  // The API a template of the bundle exports: its claim CRD, as the Configuration's XRD makes it (no Crossplane runs).
  await installClaimApi(cp, PG.resource, 'crossplane-system');
  // The backend's Service, where the public URL's listener sends each connection (through the node's bridge).
  const svc = await requireOk(cp, 'GET', `/api/v1/namespaces/${BACKEND_NS}/services/klutch-bind-backend`);
  const serviceForward = await cpNode.forward(svc.spec.clusterIP, 443);
  closers.push(serviceForward.close);
  closers.push(await listenAt(publicPort, () => serviceForward.port));
  await requireOk(app, 'POST', '/api/v1/namespaces', { metadata: { name: APP_NS } });
}, 30 * 60_000);

afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => undefined);
  await appNode?.stop();
  await cpNode?.stop();
  await cps?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

/** `kubectl bind <publicUrl>/export` as a user runs it, the login done by a browser on the control plane's network. */
async function bind(extra: readonly string[] = []): Promise<CliRun> {
  const run = await startCli([`${publicUrl}/export`, '--accept-permission-claims', '--no-browser', '--wait=120s', ...extra], {
    kubeconfig: cps.clusters[APP]!.kubeconfig,
    env: {
      NODE_EXTRA_CA_CERTS: join(dir, 'backend-ca.crt'),
      // The user's machine reaches the external address the provider kubeconfig names (the app node's bridge to the
      // control plane) at the same API server on loopback; any other address is refused (host-routes.cjs).
      NODE_OPTIONS: `--require ${join(repoRoot(), 'test', 'support', 'node', 'host-routes.cjs')}`,
      KLUTCH_KIT_HOST_ROUTES: JSON.stringify(hostRoutes),
    },
    closeStdin: true,
  });
  return run;
}
async function login(run: CliRun): Promise<void> {
  await headlessLogin(await run.loginUrl(), {
    idp,
    user: 'alice',
    resource: PG.resource,
    ca: [backendCa],
    route: (u) => (u.hostname === cpNode.ip ? idpRoute : undefined),
  });
}
async function done(run: CliRun): Promise<void> {
  const r = await run.done;
  if (r.code !== 0) throw new Error(`kubectl bind exited ${r.code ?? r.signal}:\n${r.stderr}\n${r.stdout}`);
}

describe('the install bundle on a control plane, the backend as Pods', () => {
  it(
    'runs the backend Deployment of the bundle: two Pods of its image Ready (issuer discovered through the bridge), one leads',
    async () => {
      const d = await deploymentReady(cp, cpNode, BACKEND_NS, 'klutch-bind-backend', 2);
      expect(d.spec.template.spec.containers[0].image).toBe(DEPLOYABLE_IMAGES.backend);
      const lease = await leaderLease();
      expect((await pods(cp, BACKEND_NS, 'app.kubernetes.io/name=klutch-bind-backend')).map((p) => p.metadata.name)).toContain(
        lease.spec.holderIdentity,
      );
    },
    STEP,
  );

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

describe('the konnector as Pods in an app cluster', () => {
  let deploymentUid: string;

  it(
    'runs the shipped konnector YAML (dist/app-cluster/konnector/konnector.yaml) unchanged as Pods of its image: restricted, with its ServiceAccount token, probes Ready, one leads',
    async () => {
      const r = kubectl(APP, ['apply', '--server-side', '-f', join(dir, 'dist', 'app-cluster', 'konnector', 'konnector.yaml')]);
      expect(r.code, r.out).toBe(0);
      const d = await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2);
      deploymentUid = d.metadata.uid;
      expect(d.spec.template.spec.containers[0].image).toBe(DEPLOYABLE_IMAGES.konnector);
      const selector = Object.entries(d.spec.selector.matchLabels as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const running = await pods(app, KONNECTOR_NS, selector);
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
      // Its readiness answers from inside the Pod network, as the kubelet's probe does.
      const readyz = appNode.exec('/bin/busybox', ['wget', '-q', '-O-', `http://${pod.status.podIP}:8080/readyz`]);
      expect(readyz.code, readyz.output).toBe(0);
    },
    STEP,
  );

  it(
    'kubectl bind over it: the same Deployment (no selector conflict), the binding Ready, a claim up and its status down',
    async () => {
      const run = await bind();
      await login(run);
      await done(run);
      const d = await getObject(app, `/apis/apps/v1/namespaces/${KONNECTOR_NS}/deployments/konnector`);
      expect(d?.metadata.uid).toBe(deploymentUid);
      await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2);
      await claimSyncs('first');
    },
    STEP,
  );

  it(
    'rolls out a new konnector image with no claim lost: the claims stay on both sides and a new one syncs',
    async () => {
      const next = DEPLOYABLE_IMAGES.konnector!.replace(/:[^:]+$/, ':v0.1.1-test');
      const tagged = appNode.exec('ctr', [
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
      const r = kubectl(APP, ['-n', KONNECTOR_NS, 'set', 'image', 'deployment/konnector', `konnector=${next}`]);
      expect(r.code, r.out).toBe(0);
      const d = await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2);
      expect(d.spec.template.spec.containers[0].image).toBe(next);
      await eventually('only Pods of the new image', async () => {
        const ps = await pods(app, KONNECTOR_NS, 'app.kubernetes.io/name=konnector');
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
      expect(appNode.exec('iptables', ['-I', ...rule]).code).toBe(0);
      try {
        await eventually(
          'a konnector Pod not Ready while the API server is unreachable',
          async () => ((await pods(app, KONNECTOR_NS, 'app.kubernetes.io/name=konnector')).some((p) => !ready(p)) ? true : undefined),
          90_000,
        );
      } finally {
        appNode.exec('iptables', ['-D', ...rule]);
      }
      await deploymentReady(app, appNode, KONNECTOR_NS, 'konnector', 2, 120_000);
      await claimSyncs('after-outage');
    },
    STEP,
  );
});

describe('the backend at two replicas', () => {
  it(
    "binds while the leader's Pod is deleted in the middle of the bind",
    async () => {
      const lease = await leaderLease();
      const run = await bind(['--skip-konnector']);
      const url = await run.loginUrl();
      await requireOk(cp, 'DELETE', `/api/v1/namespaces/${BACKEND_NS}/pods/${lease.spec.holderIdentity}`);
      await headlessLogin(url, {
        idp,
        user: 'alice',
        resource: PG.resource,
        ca: [backendCa],
        route: (u) => (u.hostname === cpNode.ip ? idpRoute : undefined),
      });
      await done(run);
      await deploymentReady(cp, cpNode, BACKEND_NS, 'klutch-bind-backend', 2);
      const next = await eventually('another replica leading', async () => {
        const l = await getObject(cp, `/apis/coordination.k8s.io/v1/namespaces/${BACKEND_NS}/leases/${lease.metadata.name}`);
        return l?.spec?.holderIdentity && l.spec.holderIdentity !== lease.spec.holderIdentity ? l : undefined;
      });
      expect(next.spec.holderIdentity).not.toBe(lease.spec.holderIdentity);
      await claimSyncs('after-leader-loss');
    },
    STEP,
  );
});

/** The backend's leader-election Lease (its default name) once a replica holds it. */
function leaderLease(): Promise<WireObject> {
  return eventually('a backend replica holding the leader Lease', async () => {
    const l = await getObject(cp, `/apis/coordination.k8s.io/v1/namespaces/${BACKEND_NS}/leases/klutch-bind-backend`);
    return l?.spec?.holderIdentity ? l : undefined;
  });
}

/** The claims upstream (the consumer's cluster namespace on the control plane): name → uid. */
async function upstreamClaims(): Promise<Map<string, string>> {
  const list = await requireOk(cp, 'GET', `/apis/${PG.group}/v1/${PG.resource}`);
  return new Map((list.items as WireObject[]).map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.uid]));
}

/** A new claim in the app cluster reaches the control plane, and a status written there comes back down. */
async function claimSyncs(name: string): Promise<void> {
  const example = parseAllDocuments(
    readFileSync(join(dir, 'dist', 'packages', 'dataservices', 'examples', 'postgresql-a8s.yaml'), 'utf8'),
  )[0]!.toJS() as WireObject;
  await requireOk(app, 'POST', `/apis/${PG.group}/v1/namespaces/${APP_NS}/${PG.resource}`, {
    ...example,
    metadata: { name, namespace: APP_NS },
  });
  const up = await eventually(`claim ${APP_NS}/${name} on the control plane`, async () => {
    const list = await requireOk(cp, 'GET', `/apis/${PG.group}/v1/${PG.resource}`);
    return (list.items as WireObject[]).find((o) => o.metadata.name === name);
  });
  await requireOk(
    cp,
    'PATCH',
    `/apis/${PG.group}/v1/namespaces/${up.metadata.namespace}/${PG.resource}/${name}/status`,
    { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: new Date().toISOString() }] } },
    'application/merge-patch+json',
  );
  await eventually(`status of ${APP_NS}/${name} down in the app cluster`, async () => {
    const o = await getObject(app, `/apis/${PG.group}/v1/namespaces/${APP_NS}/${PG.resource}/${name}`);
    return (o?.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True') ? o : undefined;
  });
}
