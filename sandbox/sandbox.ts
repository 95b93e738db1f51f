/**
 * The whole platform on one machine, as an operator deploys it (issue 18 item 6, issue 20 item 3): two real
 * Kubernetes clusters (`control-plane`, `app`), each with a node that runs Pods (kubelet, containerd, kube-proxy,
 * CoreDNS in a network namespace of the run). On the control plane: a registry with our images and packages,
 * Crossplane from its Helm chart pulling our Configuration and its dependencies from there (our function and
 * provider-kubernetes as the Pods it makes), the install bundle synth writes applied with `kubectl apply -k` (the bind
 * backend as Pods behind its Service), and the CloudNativePG operator with our PostgreSQL image. In the app cluster:
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
import { BACKEND_CLIENT } from '../harness/parts/bind-backend';
import { Browser } from '../harness/login/browser';
import { parseYaml } from '../harness/crossplane/catalog';
import { headlessLogin, startCli } from '../harness/parts/cli';
import { startControlPlanes, type ControlPlanes } from '../harness/cluster/control-plane';
import { synthOutputAsync } from '../harness/crossplane/crossplane';
import { createWhenServed, eventually, getObject, kubeFor, type Kube, type WireObject } from '../harness/cluster/kube';
import { installCnpg, localVolumes } from '../harness/node/cnpg';
import { ensureCnpgOperatorImage, ensureCnpgPostgresImage, psqlClientPod } from '../harness/node/cnpg-images';
import { exposeHostPort } from '../harness/node/host-port';
import { linkNodes } from '../harness/node/link';
import { type Node, type NodeHandle, startNode } from '../harness/node/node';
import { ensureDeployableImages } from '../harness/node/platform-images';
import { startOidcProvider, type OidcTestProvider } from '../harness/login/oidc';
import { createCa } from '../harness/cluster/pki';
import { BACKEND_NAMESPACE, installBindBundle } from '../harness/platform/bind-bundle';
import { deployObjectStore } from '../harness/platform/object-store';
import { crossplaneControls, type CrossplaneControls } from '../harness/platform/crossplane-switch';
import { deploymentAvailable } from '../harness/platform/crossplane-deployed';
import { listenAt } from '../harness/platform/listen';
import type { Registry } from '../harness/node/registry';
import { startLoadBalancerStandIn } from '../harness/platform/load-balancer';
import { listPods, podFailure, podLogTail, podTable } from '../harness/platform/pods';
import { startPlatformOnPods } from '../harness/platform/platform-on-pods';
import { freePorts } from '../harness/cluster/processes';
import { repoRoot } from '../harness/root';
import { crossplaneVersion } from '../harness/tools/crossplane';
import { startA8sOperators } from './a8s-operators';
import { sandboxBackups, type SandboxBackup, type SandboxRestore } from './backups';
import { Interrupted, Steps } from './steps';

export const CONTROL_PLANE = 'control-plane';
export const APP = 'app';
/** Marks a folder as the sandbox's, so a second run may empty it. */
const MARKER = '.klutch-kit-sandbox';
const KONNECTOR_NAMESPACE = 'klutch-bind';
const CLAIM_NAMESPACE = 'default';
const WAIT_MS = 300_000;
/** The app node's Pod prefix (the control plane's node keeps the default 10.244.0.0/24). */
const APP_POD_CIDR = '10.244.1.0/24';
/** The load balancer stand-in's pool: addresses on the control plane's node, routed from the app node. */
const LOAD_BALANCER_POOL = '10.96.200.0/24';
/**
 * What the query Pod runs in the cnpg database, and what it prints. The table is the instance owner's, not the
 * binding role's (backends/cnpg.ts CNPG_OWNER_TRIGGER_SQL): the restore step reads it through another binding.
 */
const QUERY =
  "CREATE TABLE IF NOT EXISTS greetings (id int PRIMARY KEY, body text); INSERT INTO greetings VALUES (1, 'hello from the app cluster') ON CONFLICT (id) DO NOTHING; SELECT body FROM greetings WHERE id = 1;";

type Obj = Record<string, any>;

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
  /** psql's output lines of QUERY, run by a Pod in the app cluster with the cnpg binding's Secret. */
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
      'A node for each cluster (kubelet, containerd, kube-proxy, CoreDNS in a network namespace of its own), linked',
      async () => {
        const nodes: Node[] = [];
        const started = await Promise.allSettled([
          startNode(control, { name: 'control-plane-node', images: [images.backend!, images.operator!, images.postgres!], log }),
          startNode(app, { name: 'app-node', podCidr: APP_POD_CIDR, images: [images.konnector!, images.postgres!], log }),
        ]);
        for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
        // Nodes end before their clusters: pushed after the clusters' stop, so they run first.
        cleanups.push(async () => {
          for (const n of nodes.reverse()) await n.stop();
        });
        const failed = started.find((s) => s.status === 'rejected');
        if (failed) throw (failed as PromiseRejectedResult).reason;
        const [c, a] = nodes as [Node, Node];
        const link = linkNodes(a, c, { routes: [LOAD_BALANCER_POOL], fromPodCidr: APP_POD_CIDR });
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
    const cnpgInstall = steps.ahead(async (say) => {
      await localVolumes(kc, join(cpNode.runDir, 'volumes'), 3, '1Gi');
      await installCnpg(kc);
      const lb = startLoadBalancerStandIn(kc, LOAD_BALANCER_POOL, log);
      cleanups.push(() => lb.stop());
      say(`STAND-IN for a load balancer controller: LoadBalancer Services get addresses of ${LOAD_BALANCER_POOL}`);
    });
    const backendInstall = steps.ahead(async (say) => {
      // The platform's object store first (seconds; the bundle waits for Crossplane's kinds anyway): the backend makes
      // each provider namespace's backup tenant there (docs/backups.md).
      const store = await deployObjectStore(kc, cpNode, { log: say });
      cleanups.push(() => store.close());
      say(`object store (the Versity S3 Gateway) at ${store.endpoint}: a bucket and keys per provider namespace, for cnpg backups`);
      const [idpPort, publicPort] = (await freePorts(2)) as [number, number];
      const url = `https://127.0.0.1:${publicPort}`;
      // The provider runs on the host; its issuer is the control plane node's address, bridged there.
      const i: OidcTestProvider = await startOidcProvider({
        issuerHost: cpNode.ip,
        port: idpPort,
        clients: [{ ...BACKEND_CLIENT, redirectUris: [`${url}/callback`] }],
        users: [{ sub: user }],
        logDir: join(o.dir, 'oidc-provider'),
      });
      cleanups.push(() => i.stop());
      const bridge = await exposeHostPort(cpNode, idpPort);
      cleanups.push(bridge.close);
      const forward = await cpNode.forward(cpNode.ip, idpPort);
      cleanups.push(forward.close);
      // The control plane's API server where the app cluster's konnector reaches it: the consumers' address.
      const cpPort = Number(new URL(control.server).port);
      const api = await exposeHostPort(appNode, cpPort);
      cleanups.push(api.close);
      const ca = await createCa('klutch-kit sandbox backend CA');
      const tls = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
      writeFileSync(join(o.dir, 'backend-ca.crt'), ca.cert);
      await installBindBundle({
        cluster: control,
        node: cpNode,
        dist: synthDir,
        dir: join(o.dir, 'backend'),
        issuer: i.issuer,
        issuerCa: i.ca,
        publicUrl: url,
        externalAddress: `https://${api.address}`,
        tls,
        // The bundle's backend binds an API only for whom its template names: the sandbox's user, for every API.
        bindAllowedSubjects: [user],
        backupStore: { endpoint: store.endpoint, ca: store.ca, admin: store.admin },
        log: say,
        signal: giveUp.signal,
      });
      const svc = await getObject(kc, `/api/v1/namespaces/${BACKEND_NAMESPACE}/services/klutch-bind-backend`);
      if (!svc) throw new Error(`the install bundle made no Service ${BACKEND_NAMESPACE}/klutch-bind-backend`);
      const toService = await cpNode.forward(svc.spec.clusterIP, 443);
      cleanups.push(toService.close);
      cleanups.push(await listenAt(publicPort, () => toService.port));
      // kube-proxy programs the Service a moment after its endpoints turn ready: wait for the first answer.
      const browser = new Browser({ ca: [ca.cert] });
      await eventually(`the backend's Service answering ${url}/export`, async () => {
        const page = await browser.get(`${url}/export`).catch(() => undefined);
        return page?.status === 200 ? page : undefined;
      });
      say(`OpenID provider ${i.issuer} (user "${user}"), bridged into the control plane's node`);
      say(`bind backend Pods behind Service ${BACKEND_NAMESPACE}/klutch-bind-backend (${svc.spec.clusterIP}), public URL ${url}`);
      return {
        idp: i,
        publicUrl: url,
        backendCa: ca.cert,
        idpRoute: { host: '127.0.0.1', port: forward.port },
        hostRoutes: { [api.address]: cpPort },
      };
    });
    // A failed step 4 must not leave the bundle waiting for kinds that will never come.
    const ahead = <T>(step: Promise<T>) => step.catch((e: unknown) => (giveUp.abort(), Promise.reject(e)));

    const platform = await ahead(
      steps.run(
        'The control plane as deployed: a registry, Crossplane from its Helm chart, our packages pulled from the registry',
        async () => {
          const p = await startPlatformOnPods(control, cpNode, synthDir, { log });
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

    const { idp, publicUrl, backendCa, idpRoute, hostRoutes } = await steps.run(
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
    const login = { issuer: idp.issuer, issuerCa: idp.ca, issuerRoute: idpRoute, user, backendCa, hostRoutes };
    o.onControlPlane?.({
      kubeconfig: kubeconfigs.controlPlane,
      node: cpNode.handle,
      synthDir,
      registry,
      images: platform.images,
      login,
      backendUrl: publicUrl,
    });

    const bindOnce = async (resource: string): Promise<void> => {
      const cli = await startCli([`${publicUrl}/export`, '--accept-permission-claims', '--no-browser', '--wait=180s'], {
        kubeconfig: app.kubeconfig,
        env: {
          NODE_EXTRA_CA_CERTS: join(o.dir, 'backend-ca.crt'),
          // This machine reaches the control plane's external address (the app node's bridge to it) at the same API
          // server on loopback; any other address is refused (host-routes.cjs).
          NODE_OPTIONS: `--require ${join(repoRoot(), 'harness', 'node', 'host-routes.cjs')}`,
          KLUTCH_KIT_HOST_ROUTES: JSON.stringify(hostRoutes),
        },
        closeStdin: true,
      });
      const url = await cli.loginUrl();
      steps.say(`kubectl bind ${publicUrl}/export  →  login URL ${url.slice(0, 60)}...`);
      await headlessLogin(url, {
        idp,
        user,
        resource,
        ca: [backendCa],
        route: (u) => (u.hostname === cpNode.ip ? idpRoute : undefined),
      });
      steps.say(`logged in as "${user}" (headless) and picked ${resource} on the backend's page`);
      const r = await cli.done;
      if (r.code !== 0) throw new Error(`kubectl bind exited with ${r.code ?? r.signal}:\n${r.stderr}\n${r.stdout}`);
      for (const line of r.stdout.split('\n').slice(0, 3)) if (line.trim()) steps.say(line);
    };
    const bound = new Map<string, Promise<void>>();
    const bind = (resource: string): Promise<void> => {
      let b = bound.get(resource);
      if (!b) {
        b = bindOnce(resource);
        bound.set(resource, b);
        b.catch(() => bound.delete(resource)); // a failed bind may be asked for again
      }
      return b;
    };
    await steps.run('kubectl bind: PostgresqlInstance (the konnector Deployment installed in the app cluster, as Pods)', async () => {
      await bind('postgresqlinstances');
      await deploymentAvailable(ka, appNode, KONNECTOR_NAMESPACE, 'konnector', 'app.kubernetes.io/name=konnector');
      const konnectors = await listPods(ka, KONNECTOR_NAMESPACE, 'app.kubernetes.io/name=konnector');
      steps.say(`konnector Pods Ready in the app cluster: ${konnectors.map((p) => p.metadata.name).join(', ')}`);
    });
    await steps.run('kubectl bind: ServiceBinding (the same login kubeconfig Secret reused)', () => bind('servicebindings'));

    const example = (name: string): Obj | undefined => {
      const text = files.get(`packages/dataservices/examples/${name}.yaml`);
      return text ? (parseYaml(text)[0] as Obj) : undefined;
    };
    const instance = 'demo-postgresql';
    const binding = 'demo-binding';
    // A package without the cnpg backend (a catalog of its own) makes only the a8s pair.
    const cnpg = example('postgresql-cnpg') ? { instance: 'demo-cnpg', binding: 'demo-cnpg-binding' } : undefined;
    const instances = [
      { name: instance, example: 'postgresql-a8s' },
      ...(cnpg ? [{ name: cnpg.instance, example: 'postgresql-cnpg' }] : []),
    ];
    /** What to read when a claim does not get there: the Pods of its namespace on the control plane, with logs. */
    const diagnose = async (ns?: string) =>
      `\n${ns ? await podFailure(kc, cpNode, ns, '').catch(() => '') : ''}${await podFailure(ka, appNode, KONNECTOR_NAMESPACE, 'app.kubernetes.io/name=konnector').catch(() => '')}`;
    const until = async <T>(what: string, check: () => Promise<T | undefined>, ns?: string, timeoutMs = WAIT_MS): Promise<T> => {
      try {
        return await eventually(what, check, timeoutMs);
      } catch (e) {
        throw new Error(`${(e as Error).message}${await diagnose(ns)}`, { cause: e });
      }
    };

    const providerNamespace = await steps.run(
      `PostgresqlInstances ${instances.map((i) => `${CLAIM_NAMESPACE}/${i.name} (${i.example.replace('postgresql-', '')})`).join(' and ')} created in the app cluster, arriving in the control plane`,
      async () => {
        if (!cnpg) steps.say('the package has no cnpg example: the cnpg PostgresqlInstance is left out');
        for (const i of instances) {
          const pg = example(i.example);
          if (!pg) throw new Error(`the synth output has no example ${i.example}`);
          // A claim an interrupted run left is taken as it is (409).
          await createWhenServed(ka, 'postgresqlinstances', { ...pg, metadata: { name: i.name, namespace: CLAIM_NAMESPACE } }, EXISTING);
        }
        const ns = await until(
          'the bind backend to assign a control-plane namespace',
          async () =>
            ((await getObject(kc, `/apis/klutch.anynines.com/v1alpha1/apiservicenamespaces`))?.items as Obj[] | undefined)?.find(
              (n) => n.metadata.name === CLAIM_NAMESPACE,
            )?.status?.namespace as string | undefined,
        );
        for (const i of instances) {
          const up = await until(`${i.name} on the control plane`, () => getObject(kc, claimPath('postgresqlinstances', ns, i.name)), ns);
          // A claim (v1) names its composite; a namespaced composite (v2) is the object itself and names what it composed.
          const composed = await until(
            `Crossplane to compose ${i.name}`,
            async () => {
              const live = await getObject(kc, claimPath('postgresqlinstances', ns, i.name));
              if (target === 'v1') return live?.spec?.resourceRef as Obj | undefined;
              const refs = live?.spec?.crossplane?.resourceRefs as Obj[] | undefined;
              return refs?.length ? { ...live, refs } : undefined;
            },
            ns,
          );
          steps.say(
            target === 'v1'
              ? `${ns}/${i.name} (composition ${up.spec.compositionRef.name}): Crossplane composed ${composed.kind} ${composed.name} with our function`
              : `${ns}/${i.name}: Crossplane composed ${composed.kind} ${ns}/${i.name} (composition ${composed.spec.crossplane.compositionRef.name}) into ${composed.refs.map((r: Obj) => `${r.kind} ${r.name}`).join(', ')} with our function`,
          );
        }
        return ns;
      },
    );

    await steps.run(
      `Ready: the a8s PostgreSQL (stand-in operator)${cnpg ? ' and CloudNativePG running PostgreSQL as a Pod' : ''} → the claims → the app cluster`,
      async () => {
        for (const i of instances) {
          const phases = new Set<string>();
          const ready = await until(
            `PostgresqlInstance ${i.name} Ready in the app cluster`,
            async () => {
              const c = await getObject(ka, claimPath('postgresqlinstances', CLAIM_NAMESPACE, i.name));
              if (c?.status?.managed?.phase && !phases.has(c.status.managed.phase)) {
                phases.add(c.status.managed.phase);
                steps.say(`${i.name} in the app cluster: ${c.status.managed.phase}`);
              }
              return c?.status?.conditions?.some((x: Obj) => x.type === 'Ready' && x.status === 'True') ? c : undefined;
            },
            providerNamespace,
          );
          const m = (ready.status.managed ?? {}) as Obj;
          steps.say(`${i.name} in the app cluster: Ready=True (${m.phase ?? m.clusterStatus ?? 'managed status not reported'})`);
        }
      },
    );

    const bindings = [
      { name: binding, instance, example: 'servicebinding-a8s' },
      ...(cnpg ? [{ name: cnpg.binding, instance: cnpg.instance, example: 'servicebinding-cnpg' }] : []),
    ];
    await steps.run(
      `ServiceBindings ${bindings.map((b) => `${CLAIM_NAMESPACE}/${b.name}`).join(' and ')}: credentials back in the app cluster as <binding>-creds`,
      async () => {
        for (const b of bindings) {
          const sb = example(b.example);
          if (!sb) throw new Error(`the synth output has no example ${b.example}`);
          await createWhenServed(
            ka,
            'servicebindings',
            {
              ...sb,
              metadata: { name: b.name, namespace: CLAIM_NAMESPACE },
              spec: { ...sb.spec, instanceRef: b.instance },
            },
            EXISTING,
          );
        }
        for (const b of bindings) {
          const secret = await until(
            `Secret ${CLAIM_NAMESPACE}/${b.name}-creds with data in the app cluster`,
            async () => {
              const s = await getObject(ka, `/api/v1/namespaces/${CLAIM_NAMESPACE}/secrets/${b.name}-creds`);
              return Object.keys(s?.data ?? {}).length ? s : undefined;
            },
            providerNamespace,
          );
          const address = Buffer.from(String(secret.data.instance_service ?? ''), 'base64').toString();
          steps.say(
            `Secret ${CLAIM_NAMESPACE}/${b.name}-creds holds ${Object.keys(secret.data).sort().join(', ')} (instance_service ${address})`,
          );
        }
      },
    );

    const query = cnpg
      ? await steps.run(
          `A Pod in the app cluster connects with Secret ${cnpg.binding}-creds and queries PostgreSQL on the control plane`,
          async () => {
            const lines = await psqlPod(ka, appNode, `${cnpg.binding}-creds`, QUERY);
            steps.say(`psql -c "${QUERY}"`);
            for (const line of lines) steps.say(`  ${line}`);
            return lines;
          },
        )
      : undefined;

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
          namespace: CLAIM_NAMESPACE,
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
    `/api/v1/namespaces/${CLAIM_NAMESPACE}/pods`,
    psqlClientPod({ name, secret, sql, tls: 'verify-ca', labels: { 'app.kubernetes.io/name': 'sandbox-psql' } }),
  );
  if (r.code >= 300) throw new Error(`cannot create Pod ${CLAIM_NAMESPACE}/${name}: ${r.code} ${JSON.stringify(r.body?.message)}`);
  const pod: WireObject = await eventually(
    `Pod ${CLAIM_NAMESPACE}/${name} done`,
    async () => {
      const p = await getObject(kube, `/api/v1/namespaces/${CLAIM_NAMESPACE}/pods/${name}`);
      return ['Succeeded', 'Failed'].includes(p?.status?.phase) ? p : undefined;
    },
    120_000,
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await podFailure(kube, node, CLAIM_NAMESPACE, 'app.kubernetes.io/name=sandbox-psql')}`, { cause: e });
  });
  const body = (await kube.request('GET', `/api/v1/namespaces/${CLAIM_NAMESPACE}/pods/${name}/log`)).body as WireObject | string;
  const out = typeof body === 'string' ? body : String(body?.message ?? JSON.stringify(body));
  if (pod.status.phase !== 'Succeeded')
    throw new Error(`Pod ${CLAIM_NAMESPACE}/${name} (psql) failed: ${out}\n${podLogTail(node, CLAIM_NAMESPACE, name)}`);
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

/** A claim an interrupted run left is taken as it is. */
const EXISTING = { existing: 'ok' } as const;

const claimPath = (plural: string, namespace: string, name: string) => `/apis/anynines.com/v1/namespaces/${namespace}/${plural}/${name}`;
