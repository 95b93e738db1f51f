/**
 * The whole platform on one machine, from the parts the tests use (test/support/): two real Kubernetes clusters
 * (`control-plane`, `app`), the real Crossplane loop on the control plane (Crossplane core v2, provider-kubernetes, our
 * function and packages: the default Klutch-compatible package, or with `crossplane: 'v2'` the v2-native one), a local OpenID provider, our bind backend, `kubectl bind` (the bundled plugin, its browser
 * login done headless), our konnector, and a PostgresqlInstance travelling from the app cluster to the control plane
 * with its status and credentials coming back.
 *
 * What cannot run here is played, and says so in its output: the a8s operators (sandbox/a8s-operators.ts); and the
 * konnector Deployment the plugin installs has no kubelet to run it, so the same bundle runs as a process under the
 * Deployment's ServiceAccount.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_CLIENT, callbackUri, installBindCrds, startBindBackend, type BindBackend } from '../test/support/bind-backend';
import { parseYaml } from '../test/support/catalog';
import { headlessLogin, startCli } from '../test/support/cli';
import { startControlPlanes, type ControlPlanes } from '../test/support/control-plane';
import type { CrossplaneTarget } from '../apis/api';
import { apply, startCrossplane, synthOutputAsync, type Crossplane } from '../test/support/crossplane';
import { konnectorKubeconfig, startKonnector, type KonnectorProcess } from '../test/support/konnector';
import { eventually, getObject, kubeFor, type Kube } from '../test/support/kube';
import { startOidcProvider, type OidcTestProvider } from '../test/support/oidc';
import { freePorts } from '../test/support/processes';
import { startA8sOperators, type RunningStandIn } from './a8s-operators';
import { Steps } from './steps';

export const CONTROL_PLANE = 'control-plane';
export const APP = 'app';
/** Marks a folder as the sandbox's, so a second run may empty it. */
const MARKER = '.klutch-kit-sandbox';
const KONNECTOR_NAMESPACE = 'klutch-bind';
const CLAIM_NAMESPACE = 'default';
const WAIT_MS = 180_000;

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
}

export interface Sandbox {
  /** Admin kubeconfig files of the two clusters. */
  readonly kubeconfigs: { readonly controlPlane: string; readonly app: string };
  readonly backendUrl: string;
  readonly oidcIssuer: string;
  /** The claims made in the app cluster, and where they live on the control plane. */
  readonly claims: { readonly instance: string; readonly binding: string; readonly providerNamespace: string };
  /** The synth output installed (path → content). */
  readonly files: ReadonlyMap<string, string>;
  /** The control plane's Crossplane (for tests that change its packages). */
  readonly crossplane: Crossplane;
  /** Binds one more API (its plural) with kubectl bind, as the sandbox bound PostgresqlInstance and ServiceBinding. */
  bind(resource: string): Promise<void>;
  /** Ends every process, in reverse order of start; safe to call more than once, and after a failed start. */
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
      const c = await startControlPlanes({ clusters: [CONTROL_PLANE, APP], runDir: join(o.dir, 'clusters'), log });
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

    const files = await steps.run('npm run synth: packages, export templates, manifests (started with the clusters)', async () => {
      const f = await synth;
      steps.say(`${f.size} files in ${synthDir}`);
      return f;
    });

    const xp: Crossplane = await steps.run(
      `The control plane: Crossplane core, provider-kubernetes and our function; our packages installed by Crossplane`,
      async () => {
        const x = await startCrossplane(control, {
          runDir: join(o.dir, 'crossplane'),
          files,
          log,
          debug: { crossplane: false },
          version: 'v2',
        });
        steps.say(
          target === 'v1'
            ? `Crossplane ${x.release} with the default package: Klutch's claims (LegacyCluster XRDs)`
            : `Crossplane ${x.release} with the --crossplane v2 package: namespaced composites, Klutch's claims become them`,
        );
        cleanups.push(() => x.stop());
        const stand: RunningStandIn = await startA8sOperators(kc, log);
        cleanups.push(() => stand.stop());
        steps.say('STAND-IN for the a8s operators (they start database Pods, which need a kubelet): it marks a8s objects ready');
        return x;
      },
    );

    const { idp, backend } = await steps.run(
      'The OpenID provider and our bind backend, with the bind CRDs and export templates',
      async () => {
        const [port] = (await freePorts(1)) as [number];
        const i: OidcTestProvider = await startOidcProvider({
          clients: [{ ...BACKEND_CLIENT, redirectUris: [callbackUri(port)] }],
          users: [{ sub: user }],
          logDir: join(o.dir, 'oidc-provider'),
        });
        cleanups.push(() => i.stop());
        await installBindCrds(kc);
        const templates = [...xp.files].filter(([path]) => path.startsWith('control-plane/export-templates/'));
        for (const [, text] of templates) await apply(kc, parseYaml(text)[0] as Obj);
        mkdirSync(join(o.dir, 'backend'), { recursive: true });
        const b: BindBackend = await startBindBackend({
          cluster: control,
          idp: i,
          port,
          dir: join(o.dir, 'backend'),
          namespace: 'klutch-bind-backend',
        });
        cleanups.push(() => b.stop());
        steps.say(`OpenID provider ${i.issuer} (user "${user}"); bind backend ${b.url}/export offering ${templates.length} APIs`);
        return { idp: i, backend: b };
      },
    );

    let konnector: KonnectorProcess | undefined;
    const bind = async (resource: string): Promise<void> => {
      const cli = await startCli([`${backend.url}/export`, '--accept-permission-claims', '--no-browser'], {
        kubeconfig: app.kubeconfig,
        closeStdin: true,
      });
      const url = await cli.loginUrl();
      steps.say(`kubectl bind ${backend.url}/export  →  login URL ${url.slice(0, 60)}...`);
      await headlessLogin(url, { idp, user, resource });
      steps.say(`logged in as "${user}" (headless) and picked ${resource} on the backend's page`);
      const installed = cli.printed(/^(Konnector (installed|upgraded|unchanged)|Kept the konnector)/m).then(async () => {
        if (konnector) return;
        konnector = await startKonnector({
          kubeconfig: await konnectorKubeconfig(app, KONNECTOR_NAMESPACE, 86_400), // a day, as the Pod's projected token would be renewed
          namespace: KONNECTOR_NAMESPACE,
          logDir: join(o.dir, 'konnector'),
        });
        const k = konnector;
        cleanups.push(() => k.proc.stop());
        steps.say(
          'the konnector Deployment kubectl bind installed cannot start (no kubelet): the same bundle runs as a process under its ServiceAccount',
        );
      });
      const [r] = await Promise.all([cli.done, installed.catch(() => undefined)]);
      await installed;
      if (r.code !== 0) throw new Error(`kubectl bind exited with ${r.code ?? r.signal}:\n${r.stderr}`);
      for (const line of r.stdout.split('\n').slice(0, 3)) if (line.trim()) steps.say(line);
    };
    await steps.run('kubectl bind: PostgresqlInstance (the konnector installed in the app cluster)', () => bind('postgresqlinstances'));
    await steps.run('kubectl bind: ServiceBinding (the same login kubeconfig Secret reused)', () => bind('servicebindings'));

    const example = (name: string): Obj => {
      const text = xp.files.get(`packages/dataservices/examples/${name}.yaml`);
      if (!text) throw new Error(`the synth output has no example ${name}`);
      return parseYaml(text)[0] as Obj;
    };
    const instance = 'demo-postgresql';
    const binding = 'demo-binding';
    const providerNamespace = await steps.run(
      `PostgresqlInstance ${CLAIM_NAMESPACE}/${instance} created in the app cluster, arriving in the control plane`,
      async () => {
        const pg = example('postgresql-a8s');
        await create(ka, 'postgresqlinstances', { ...pg, metadata: { name: instance, namespace: CLAIM_NAMESPACE } });
        const ns = await eventually(
          'the bind backend to assign a control-plane namespace',
          async () =>
            (await getObject(kc, `/apis/klutch.anynines.com/v1alpha1/apiservicenamespaces`))?.items?.find(
              (n: Obj) => n.metadata.name === CLAIM_NAMESPACE,
            )?.status?.namespace as string | undefined,
          WAIT_MS,
        );
        const up = await eventually(
          'the claim on the control plane',
          () => getObject(kc, claimPath('postgresqlinstances', ns, instance)),
          WAIT_MS,
        );
        steps.say(`on the control plane as ${ns}/${instance} (${up.kind}, composition ${up.spec.compositionRef.name})`);
        // A claim (v1) names its composite; a namespaced composite (v2) is the object itself and names what it composed.
        const composed = await eventually(
          'Crossplane to compose it',
          async () => {
            const live = await getObject(kc, claimPath('postgresqlinstances', ns, instance));
            if (target === 'v1') return live?.spec?.resourceRef as Obj | undefined;
            const refs = live?.spec?.crossplane?.resourceRefs as Obj[] | undefined;
            return refs?.length ? { ...live, refs } : undefined;
          },
          WAIT_MS,
        );
        steps.say(
          target === 'v1'
            ? `Crossplane composed ${composed.kind} ${composed.name} with our function`
            : `Crossplane composed ${composed.kind} ${ns}/${instance} (composition ${composed.spec.crossplane.compositionRef.name}) into ${composed.refs.map((r: Obj) => `${r.kind} ${r.name}`).join(', ')} with our function`,
        );
        return ns;
      },
    );

    await steps.run('Ready: the a8s PostgreSQL object (stand-in operator) → the claim → the app cluster', async () => {
      const ready = await eventually(
        `PostgresqlInstance ${instance} Ready in the app cluster`,
        async () => {
          const c = await getObject(ka, claimPath('postgresqlinstances', CLAIM_NAMESPACE, instance));
          return c?.status?.conditions?.some((x: Obj) => x.type === 'Ready' && x.status === 'True') ? c : undefined;
        },
        WAIT_MS,
      );
      steps.say(`status in the app cluster: Ready=True, managed ${JSON.stringify(ready.status.managed ?? {})}`);
    });

    await steps.run(
      `ServiceBinding ${CLAIM_NAMESPACE}/${binding}: credentials back in the app cluster as Secret ${binding}-creds`,
      async () => {
        const sb = example('servicebinding-a8s');
        await create(ka, 'servicebindings', {
          ...sb,
          metadata: { name: binding, namespace: CLAIM_NAMESPACE },
          spec: { ...sb.spec, instanceRef: instance },
        });
        const secret = await eventually(
          `Secret ${CLAIM_NAMESPACE}/${binding}-creds with data in the app cluster`,
          async () => {
            const s = await getObject(ka, `/api/v1/namespaces/${CLAIM_NAMESPACE}/secrets/${binding}-creds`);
            return Object.keys(s?.data ?? {}).length ? s : undefined;
          },
          WAIT_MS,
        );
        steps.say(`Secret ${CLAIM_NAMESPACE}/${binding}-creds holds ${Object.keys(secret.data).sort().join(', ')}`);
      },
    );

    return {
      kubeconfigs,
      backendUrl: backend.url,
      oidcIssuer: idp.issuer,
      claims: { instance, binding, providerNamespace },
      files,
      crossplane: xp,
      bind,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
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

const claimPath = (plural: string, namespace: string, name: string) => `/apis/anynines.com/v1/namespaces/${namespace}/${plural}/${name}`;

/**
 * Creates a claim as `kubectl create` would. A CRD the konnector just installed may answer 404 or 503 for a moment:
 * that is waited out; any other refusal fails at once with the API server's message.
 */
async function create(kube: Kube, plural: string, obj: Obj): Promise<void> {
  const what = `${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`;
  const r = await eventually(
    `${what} to be created`,
    async () => {
      const res = await kube.request('POST', `/apis/${obj.apiVersion}/namespaces/${obj.metadata.namespace}/${plural}`, obj);
      return [404, 429, 503].includes(res.code) ? undefined : res;
    },
    60_000,
  );
  if (r.code >= 300 && r.code !== 409) throw new Error(`cannot create ${what}: ${r.code} ${JSON.stringify(r.body.message)}`);
}
