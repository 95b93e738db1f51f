/**
 * The whole platform on one machine, as an operator deploys it (issue 18 item 6, issue 20 item 3): two real
 * Kubernetes clusters (`control-plane`, `app`), each with a node that runs Pods (kubelet, containerd, kube-proxy,
 * CoreDNS in a network namespace of the run). On the control plane: a registry holding our release (`npm run
 * release`, pushed there as the mirror of its public names: sandbox/release.ts) and upstream's images and packages,
 * Crossplane from its Helm chart pulling our Configuration and its dependencies from there (our function and
 * provider-kubernetes as the Pods it makes), the release's install bundle applied with `kubectl apply -k` (the bind
 * backend as Pods behind its Service, its image pulled by digest), and the CloudNativePG operator with our PostgreSQL image. In the app cluster:
 * `kubectl bind` installs the konnector Deployment, which runs as Pods. Then an a8s PostgresqlInstance and a cnpg one
 * with their ServiceBindings travel from the app cluster to the control plane and back, and a Pod in the app cluster
 * queries the cnpg database with the credentials that came down.
 *
 * STAND-INS, each saying so in the output: the a8s operators (sandbox/a8s-operators.ts: their images cannot be had),
 * the load balancer controller (harness/platform/load-balancer.ts: no cloud here) and provider-anynines (its
 * package's CRDs with a runtime that only waits: no a9s platform here). How the app cluster's Pods reach the control
 * plane's PostgreSQL: docs/decisions/cloudnative-pg.md, "Exposure".
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CrossplaneTarget } from '../apis/api';
import { startControlPlanes, type ControlPlanes } from '../harness/cluster/control-plane';
import { synthOutputAsync } from '../harness/crossplane/crossplane';
import { eventually, getObject, kubeFor, type Kube, type WireObject } from '../harness/cluster/kube';
import { installCnpg, localVolumes } from '../harness/node/cnpg';
import { ensureCnpgOperatorImage, ensureCnpgPostgresImage, psqlClientPod } from '../harness/node/cnpg-images';
import { linkNodes } from '../harness/node/link';
import { type Node, type NodeHandle, startNode } from '../harness/node/node';
import { ensureDeployableImages } from '../harness/node/platform-images';
import { crossplaneControls, type CrossplaneControls } from '../harness/platform/crossplane-switch';
import { deploymentAvailable } from '../harness/platform/crossplane-deployed';
import type { Registry } from '../harness/node/registry';
import { startLoadBalancerStandIn } from '../harness/platform/load-balancer';
import { listPods, podFailure, podLogTail, podTable } from '../harness/platform/pods';
import { startPlatformOnPods } from '../harness/platform/platform-on-pods';
import { releaseDir, releasePlugin, releaseToMirror } from './release';
import { mirrorOnNode } from '../harness/node/registry';
import { DEFAULT_IMAGE_REGISTRY } from '../lib/version';
import { crossplaneVersion } from '../harness/tools/crossplane';
import { startA8sOperators } from './a8s-operators';
import { sandboxBackups, type SandboxBackup, type SandboxRestore } from './backups';
import { installBackend } from './backend-install';
import { kubectlBinder } from './kubectl-bind';
import { SANDBOX_NAMESPACE, KONNECTOR_NAMESPACE, roundTrip } from './round-trip';
import { Interrupted, Steps } from './steps';

export const CONTROL_PLANE = 'control-plane';
export const APP = 'app';
/** Marks a folder as the sandbox's, so a second run may empty it. */
const MARKER = '.klutch-kit-sandbox';
/** The app node's Pod prefix (the control plane's node keeps the default 10.244.0.0/24). */
const APP_POD_CIDR = '10.244.1.0/24';
/** The load balancer stand-in's pool: addresses on the control plane's node, routed from the app node. */
const LOAD_BALANCER_POOL = '10.96.200.0/24';

export interface SandboxOptions {
  /** Logs, synth output and kubeconfigs; emptied first. */
  readonly dir: string;
  readonly steps: Steps;
  /** Who logs in at the OpenID provider. @default developer */
  readonly user?: string;
  /**
   * The package target (`npm run synth -- --crossplane`): `v1`, Klutch's claims (LegacyCluster XRDs on Crossplane
   * v2), or `v2`, namespaced composites without claims, which the app cluster's claims become. @default v1
   */
  readonly crossplane?: CrossplaneTarget;
  /**
   * Called once the control plane is installed (Crossplane with the package, CloudNativePG, the install bundle), before
   * the app cluster is bound and the claims are made: what needs only the control plane can start on it then.
   */
  readonly onControlPlane?: (cp: SandboxControlPlane) => void;
}

/** The control plane once it is installed: everything of the Sandbox that needs no app cluster. */
export interface SandboxControlPlane extends Pick<Sandbox, 'synthDir' | 'registry' | 'images' | 'login' | 'backendUrl'> {
  /** Admin kubeconfig file of the control plane. */
  readonly kubeconfig: string;
  readonly node: NodeHandle;
}

/** Crossplane as the sandbox runs it (a Deployment from its Helm chart), with what an operator does to it. */
export interface SandboxCrossplane extends CrossplaneControls {
  /** Crossplane core's release (`v2.4.0`). */
  readonly release: string;
  /** The synth output that was installed. */
  readonly files: ReadonlyMap<string, string>;
}

export interface Sandbox {
  /** Admin kubeconfig files of the two clusters. */
  readonly kubeconfigs: { readonly controlPlane: string; readonly app: string };
  /** The nodes of the two clusters, as plain data (harness/node/attach.ts uses them from another process). */
  readonly nodes: { readonly controlPlane: NodeHandle; readonly app: NodeHandle };
  /** The synth output folder that was installed. */
  readonly synthDir: string;
  /** The run's registry (on the control plane's node) and the in-node references of what was pushed there. */
  readonly registry: Pick<Registry, 'host' | 'hostFromTest' | 'ca' | 'caFile'>;
  readonly images: Readonly<Record<string, string>>;
  /**
   * What a kubectl bind from this machine needs besides the backend's URL (as `bind` uses it): the OpenID provider's
   * issuer and CA, the route a browser of this machine takes to the issuer's address in the control plane's node, the
   * user it knows, the backend's CA, and where the control plane's external address is reached from here.
   */
  readonly login: {
    readonly issuer: string;
    readonly issuerCa: string;
    readonly issuerRoute: { readonly host: string; readonly port: number };
    readonly user: string;
    readonly backendCa: string;
    readonly hostRoutes: Readonly<Record<string, number>>;
  };
  readonly backendUrl: string;
  readonly oidcIssuer: string;
  /**
   * The claims made in the app cluster, and where they live on the control plane: the a8s PostgresqlInstance and its
   * ServiceBinding, and the cnpg pair (on both package targets; absent only from a package without the cnpg backend).
   */
  readonly claims: {
    readonly instance: string;
    readonly binding: string;
    readonly providerNamespace: string;
    readonly cnpg?: { readonly instance: string; readonly binding: string };
  };
  /** psql's output lines of the round trip's query (round-trip.ts), run by a Pod in the app cluster with the cnpg binding's Secret. */
  readonly query?: readonly string[];
  /** The synth output installed (path → content). */
  readonly files: ReadonlyMap<string, string>;
  /** The control plane's Crossplane (for tests that change its packages). */
  readonly crossplane: SandboxCrossplane;
  /** Binds one more API (its plural) with kubectl bind, as the sandbox bound PostgresqlInstance and ServiceBinding; once per API. */
  bind(resource: string): Promise<void>;
  /**
   * A step of its own: a Backup claim of the cnpg instance from the app cluster, Completed there (sandbox/backups.ts);
   * once. Fails when the package has no cnpg backups.
   */
  backup(): Promise<SandboxBackup>;
  /** A step of its own: a new instance restored from the cnpg instance's backups, and the round trip's row read there. */
  restore(): Promise<SandboxRestore>;
  /** The Pods of both clusters, `kubectl get pods -A` style. */
  pods(): Promise<string>;
  /** Ends everything, in reverse order of start: nodes, clusters, processes; safe to call more than once. */
  stop(): Promise<void>;
}

/** Runs every step; on a failure everything started so far is stopped before the error propagates. */
export async function startSandbox(o: SandboxOptions): Promise<Sandbox> {
  const { steps } = o;
  const user = o.user ?? 'developer';
  prepareDir(o.dir);
  const cleanups: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const c of cleanups.reverse()) await c().catch((e: unknown) => steps.say(`while stopping: ${String(e)}`));
    })());
  const log = (line: string) => steps.say(line);
  try {
    // synth needs no cluster: it runs while they start.
    const synthDir = join(o.dir, 'synth');
    const target = o.crossplane ?? 'v1';
    const synth = synthOutputAsync(synthDir, ['--crossplane', target]);
    synth.catch(() => undefined); // awaited in its step; a failure before then must not be unhandled
    cleanups.push(() =>
      synth.then(
        () => undefined,
        () => undefined,
      ),
    ); // a stop lets it finish: no process left behind
    const cp: ControlPlanes = await steps.run(`Two Kubernetes clusters, "${CONTROL_PLANE}" and "${APP}"`, async () => {
      const c = await startControlPlanes({ clusters: [CONTROL_PLANE, APP], runDir: join(o.dir, 'clusters'), log, pods: true });
      cleanups.push(() => c.stop());
      return c;
    });
    const control = cp.clusters[CONTROL_PLANE]!;
    const app = cp.clusters[APP]!;
    const kubeconfigs = { controlPlane: join(o.dir, `${CONTROL_PLANE}.kubeconfig`), app: join(o.dir, `${APP}.kubeconfig`) };
    copyFileSync(control.kubeconfig, kubeconfigs.controlPlane);
    copyFileSync(app.kubeconfig, kubeconfigs.app);
    const kc = kubeFor(control);
    const ka = kubeFor(app);

    const { files, images } = await steps.run(
      'npm run synth (started with the clusters), and the images: our Dockerfiles, CloudNativePG, PostgreSQL',
      async () => {
        const f = await synth;
        steps.say(`${f.size} files in ${synthDir}`);
        const deployables = await ensureDeployableImages(synthDir, log);
        const cnpg = { operator: await ensureCnpgOperatorImage(log), postgres: await ensureCnpgPostgresImage(log) };
        const all: Record<string, string> = { ...deployables, ...cnpg };
        return { files: f, images: all };
      },
    );

    const { cpNode, appNode } = await steps.run(
      'A node for each cluster (kubelet, containerd, kube-proxy, NetworkPolicies, CoreDNS in a network namespace of its own), linked',
      async () => {
        const nodes: Node[] = [];
        const started = await Promise.allSettled([
          // No backend image: the control plane's node pulls it from the release, by digest.
          startNode(control, { name: 'control-plane-node', images: [images.operator!, images.postgres!], log }),
          // No konnector image: the app cluster's node pulls the one kubectl bind installs from the release's mirror.
          startNode(app, { name: 'app-node', podCidr: APP_POD_CIDR, images: [images.postgres!], log }),
        ]);
        for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
        // Nodes end before their clusters: pushed after the clusters' stop, so they run first.
        cleanups.push(async () => {
          for (const n of nodes.reverse()) await n.stop();
        });
        const failed = started.find((s) => s.status === 'rejected');
        if (failed) throw (failed as PromiseRejectedResult).reason;
        const [c, a] = nodes as [Node, Node];
        // The load balancers' addresses, and the registry on the control plane's node (the release's mirror).
        const link = linkNodes(a, c, { routes: [LOAD_BALANCER_POOL, `${c.ip}/32`], fromPodCidr: APP_POD_CIDR });
        steps.say(`node ${c.name} at ${c.ip}, node ${a.name} at ${a.ip} (each in its own network namespace)`);
        steps.say(
          `a veth between them (${link.fromIp} ↔ ${link.toIp}): the app node routes ${LOAD_BALANCER_POOL} to the control plane's node`,
        );
        return { cpNode: c, appNode: a };
      },
    );

    // CloudNativePG and the bind backend need the control plane's cluster and node, not Crossplane: they start now,
    // beside step 4 (the bundle applies once the kinds it names from Crossplane and the providers are served), and
    // their steps join them. The control plane is ready that much sooner for the suites that wait on it.
    const giveUp = new AbortController();
    // The release step 4 publishes; the install bundle applies from it.
    let released!: (dir: string) => void;
    const release = new Promise<string>((resolve, reject) => {
      released = resolve;
      giveUp.signal.addEventListener('abort', () => reject(new Error('step 4 failed: no release to install the bundle from')));
    });
    release.catch(() => undefined); // the backend's step reports it
    const publish = releaseToMirror(releaseDir(o.dir), target, log);
    const cnpgInstall = steps.ahead(async (say) => {
      await localVolumes(kc, join(cpNode.runDir, 'volumes'), 3, '1Gi');
      await installCnpg(kc);
      const lb = startLoadBalancerStandIn(kc, LOAD_BALANCER_POOL, log);
      cleanups.push(() => lb.stop());
      say(`STAND-IN for a load balancer controller: LoadBalancer Services get addresses of ${LOAD_BALANCER_POOL}`);
    });
    const backendInstall = steps.ahead((say) =>
      installBackend({ dir: o.dir, user, control, kc, cpNode, appNode, release, cleanups, signal: giveUp.signal, say }),
    );
    // A failed step 4 must not leave the bundle waiting for kinds that will never come.
    const ahead = <T>(step: Promise<T>) => step.catch((e: unknown) => (giveUp.abort(), Promise.reject(e)));

    const platform = await ahead(
      steps.run(
        'The control plane as deployed: a registry holding our release, Crossplane from its Helm chart pulling our packages',
        async () => {
          const p = await startPlatformOnPods(control, cpNode, {
            log,
            publish: async (registry) => {
              const r = await publish(registry);
              released(r.dir);
              // The app cluster's node pulls the release's images from the same mirror.
              mirrorOnNode(appNode, registry, DEFAULT_IMAGE_REGISTRY);
              return r;
            },
          });
          cleanups.push(() => p.close());
          steps.say(
            target === 'v1'
              ? `Crossplane ${crossplaneVersion('v2')} with the default package: Klutch's claims (LegacyCluster XRDs)`
              : `Crossplane ${crossplaneVersion('v2')} with the --crossplane v2 package: namespaced composites, Klutch's claims become them`,
          );
          steps.say('STAND-IN for provider-anynines: its CRDs, a runtime that only waits (no a9s platform here)');
          const stand = await startA8sOperators(kc, log);
          cleanups.push(() => stand.stop());
          steps.say('STAND-IN for the a8s operators (their images cannot be had here): it marks a8s objects ready');
          return p;
        },
      ),
    );

    await ahead(
      steps.run('CloudNativePG: its operator as Pods (its release manifest), volumes, a load balancer', async () => {
        steps.say('started beside step 4 (it needs no Crossplane)');
        await cnpgInstall.join();
      }),
    );

    const backend = await steps.run(
      'The OpenID provider, and the install bundle (kubectl apply -k): the bind backend as Pods behind its Service',
      async () => {
        steps.say('started beside step 4, applied once Crossplane and the providers serve the kinds the bundle names');
        return backendInstall.join();
      },
    );

    const registry = {
      host: platform.registry.host,
      hostFromTest: platform.registry.hostFromTest,
      ca: platform.registry.ca,
      caFile: platform.registry.caFile,
    };
    const { idp, publicUrl } = backend;
    const login = {
      issuer: idp.issuer,
      issuerCa: idp.ca,
      issuerRoute: backend.idpRoute,
      user,
      backendCa: backend.backendCa,
      hostRoutes: backend.hostRoutes,
    };
    o.onControlPlane?.({
      kubeconfig: kubeconfigs.controlPlane,
      node: cpNode.handle,
      synthDir,
      registry,
      images: platform.images,
      login,
      backendUrl: publicUrl,
    });

    const plugin = release.then((dir) => releasePlugin(dir, join(o.dir, 'kubectl-bind')));
    plugin.catch(() => undefined); // awaited by the first bind
    const bind = kubectlBinder({ dir: o.dir, kubeconfig: app.kubeconfig, user, backend, cpNode, plugin, say: log });
    await steps.run('kubectl bind: PostgresqlInstance (the konnector Deployment installed in the app cluster, as Pods)', async () => {
      await bind('postgresqlinstances');
      await deploymentAvailable(ka, appNode, KONNECTOR_NAMESPACE, 'konnector', 'app.kubernetes.io/name=konnector');
      const konnectors = await listPods(ka, KONNECTOR_NAMESPACE, 'app.kubernetes.io/name=konnector');
      steps.say(`konnector Pods Ready in the app cluster: ${konnectors.map((p) => p.metadata.name).join(', ')}`);
    });
    await steps.run('kubectl bind: ServiceBinding (the same login kubeconfig Secret reused)', () => bind('servicebindings'));

    const { instance, binding, cnpg, providerNamespace, query, example, until } = await roundTrip({
      steps,
      files,
      target,
      kc,
      ka,
      cpNode,
      appNode,
      psql: (secret, sql) => psqlPod(ka, appNode, secret, sql),
    });
    const pods = async () => {
      const [c, a] = await Promise.all([listPods(kc), listPods(ka)]);
      return `${CONTROL_PLANE}:\n${podTable(c)}\n\n${APP}:\n${podTable(a)}`;
    };
    await steps.run('The Pods of both clusters (kubectl get pods -A)', async () => {
      for (const line of (await pods()).split('\n')) steps.say(line);
    });
    const noCnpg = () => Promise.reject(new Error('the package has no cnpg example: there is no cnpg instance to back up'));
    const backups = cnpg
      ? sandboxBackups({
          steps,
          app: ka,
          control: kc,
          namespace: SANDBOX_NAMESPACE,
          providerNamespace,
          cnpg,
          bind,
          example,
          until: (what, check, timeoutMs) => until(what, check, providerNamespace, timeoutMs),
          psql: (secret, sql) => psqlPod(ka, appNode, secret, sql),
        })
      : { backup: noCnpg, restore: noCnpg };

    return {
      kubeconfigs,
      nodes: { controlPlane: cpNode.handle, app: appNode.handle },
      synthDir,
      registry,
      images: platform.images,
      login,
      backendUrl: publicUrl,
      oidcIssuer: idp.issuer,
      claims: { instance, binding, providerNamespace, ...(cnpg ? { cnpg } : {}) },
      ...(query ? { query } : {}),
      files,
      crossplane: {
        release: crossplaneVersion('v2'),
        files,
        ...crossplaneControls({ cluster: control, node: cpNode, registry: platform.registry, log }),
      },
      bind,
      backup: backups.backup,
      restore: backups.restore,
      pods,
      stop,
    };
  } catch (e) {
    if (e instanceof Interrupted) steps.say('waiting for the running step to return, so that what it started is stopped too');
    // Work started ahead of its step registers what it started only when it returns.
    await steps.settled();
    await stop();
    throw e;
  }
}

/**
 * Runs `sql` with psql in a Pod of the app cluster whose only configuration is `secret` (host, database, user and
 * password from its a8s keys; the server checked against its `ca.crt`, sslmode=verify-ca); returns psql's output lines. A failure names the Pod and its log.
 */
async function psqlPod(kube: Kube, node: Node, secret: string, sql: string): Promise<string[]> {
  const name = `psql-${Date.now().toString(36)}`;
  const r = await kube.request(
    'POST',
    `/api/v1/namespaces/${SANDBOX_NAMESPACE}/pods`,
    psqlClientPod({ name, secret, sql, tls: 'verify-ca', labels: { 'app.kubernetes.io/name': 'sandbox-psql' } }),
  );
  if (r.code >= 300) throw new Error(`cannot create Pod ${SANDBOX_NAMESPACE}/${name}: ${r.code} ${JSON.stringify(r.body?.message)}`);
  const pod: WireObject = await eventually(
    `Pod ${SANDBOX_NAMESPACE}/${name} done`,
    async () => {
      const p = await getObject(kube, `/api/v1/namespaces/${SANDBOX_NAMESPACE}/pods/${name}`);
      return ['Succeeded', 'Failed'].includes(p?.status?.phase) ? p : undefined;
    },
    120_000,
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await podFailure(kube, node, SANDBOX_NAMESPACE, 'app.kubernetes.io/name=sandbox-psql')}`, {
      cause: e,
    });
  });
  const body = (await kube.request('GET', `/api/v1/namespaces/${SANDBOX_NAMESPACE}/pods/${name}/log`)).body as WireObject | string;
  const out = typeof body === 'string' ? body : String(body?.message ?? JSON.stringify(body));
  if (pod.status.phase !== 'Succeeded')
    throw new Error(`Pod ${SANDBOX_NAMESPACE}/${name} (psql) failed: ${out}\n${podLogTail(node, SANDBOX_NAMESPACE, name)}`);
  return out.trim().split('\n');
}

/** Empties the sandbox folder of an earlier run; refuses a folder that holds something else. */
function prepareDir(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    if (!existsSync(join(dir, MARKER)))
      throw new Error(`${dir} is not empty and not a sandbox folder of an earlier run; choose another with --dir`);
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, MARKER), 'made by npm run sandbox; emptied by the next run\n');
}
