/**
 * kubectl bind end to end, as a user runs it: the bundled plugin as a process against provider cluster `a` (our
 * bundled backend, the real OpenID provider) and app cluster `b`, the login done headless by a real HTTP client.
 *
 * The test clusters run no Pods, so the konnector Deployment the plugin installs never starts: once the plugin says it
 * installed the konnector, the test starts the bundled konnector as a process with a token of the ServiceAccount that
 * install created — standing in for the Deployment's Pod, with the same flags. Sync in depth is konnector.test.ts's; credentials on the real Crossplane loop, sandbox.test.ts's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { bindingResponse, exportTemplateManifest, responseRedirect } from '../../exports/bind-api';
import { PG, SB, startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { waitEstablished } from '../../harness/parts/bind-backend';
import { Browser } from '../../harness/login/browser';
import { cliBundle, headlessLogin, startCli, type CliRun } from '../../harness/parts/cli';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { completeScript } from '../../cli/completion';
import { cluster, controlPlanes } from '../support/cluster';
import { bearerKubeconfigYaml, type ClusterInfo } from '../../harness/cluster/control-plane';
import { konnectorKubeconfig, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { releaseBindings, removeLeftoverCrd } from '../support/bind-cleanup';
import { apply, applyAt, eventually, getObject, kubeFor, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import { freePorts } from '../../harness/cluster/processes';

const BIND = '/apis/klutch.anynines.com/v1alpha1';
const rand = () => Math.random().toString(36).slice(2, 8);
const ns = `kbc-${rand()}`; // the konnector's namespace in b (-n): bindings, kubeconfig Secrets, Lease
const app = `kbca-${rand()}`; // where the app's claims live
const PG_BINDING = `${PG.resource}.${PG.group}`;
const SB_BINDING = `${SB.resource}.${SB.group}`;
const pgPath = (namespace: string, name = '') => `/apis/anynines.com/v1/namespaces/${namespace}/${PG.resource}${name ? `/${name}` : ''}`;
/** An API whose export template claims ConfigMaps as required, to decline. */
const GADGET = { group: 'cli.klutch-kit.test', resource: 'gadgets' } as const;

type O = WireObject;
let s: BackendSuite;
let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let user: string;
let konnector: KonnectorProcess | undefined;
let logDir: string;
const kubeconfigSecrets = async () =>
  ((await requireOk(kb, 'GET', `/api/v1/namespaces/${ns}/secrets`)).items as O[])
    .map((x) => x.metadata.name as string)
    .filter((n) => n.startsWith('kubeconfig-'));
const cli = (args: readonly string[], o: { closeStdin?: boolean } = {}) =>
  startCli([...args, '-n', ns], { kubeconfig: b.kubeconfig, closeStdin: o.closeStdin ?? true });
const url = () => `${s.backend.url}/export`;
/** Fails with everything the plugin printed when it did not exit as expected. */
let runs = 0;
const exited = async (run: CliRun, code: number) => {
  const r = await run.done;
  writeFileSync(join(logDir, `kubectl-bind-${++runs}.log`), `${run.child.spawnargs.join(' ')}\nexit ${r.code}\n${r.stderr}\n${r.stdout}`);
  if (r.code !== code) throw new Error(`kubectl bind exited ${r.code ?? r.signal}, not ${code}:\n${r.stderr}\n${r.stdout}`);
  return r;
};

beforeAll(async () => {
  [a, b] = await Promise.all([cluster('a'), cluster('b')]);
  ka = kubeFor(a);
  kb = kubeFor(b);
  logDir = join((await controlPlanes()).runDir, 'cli', ns);
  mkdirSync(logDir, { recursive: true });
  s = await startBackendSuite(a, { users: 2 });
  user = s.user();
  // The declined-claim API: a CRD and a template whose claim is required.
  await applyAt(ka, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${GADGET.resource}.${GADGET.group}`, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${GADGET.resource}.${GADGET.group}` },
    spec: {
      group: GADGET.group,
      scope: 'Namespaced',
      names: { plural: GADGET.resource, singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  });
  await waitEstablished(ka, [`${GADGET.resource}.${GADGET.group}`]);
  const template = exportTemplateManifest({
    name: GADGET.resource,
    namespace: s.templateNamespace,
    ...GADGET,
    permissionClaims: [{ group: '', resource: 'configmaps', version: 'v1', required: true, selector: { owner: 'Provider' } }],
  });
  await requireOk(
    ka,
    'POST',
    `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${s.templateNamespace}/apiserviceexporttemplates`,
    template,
  );
  await requireOk(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: app } });
  // An earlier suite of this worker may have left an API's CRD behind in b, owned by its binding: the konnector
  // would refuse it as foreign. A user's cluster would be cleaned the same way (README: remove finalizers by hand).
  await Promise.all([PG_BINDING, SB_BINDING].map((crd) => removeLeftoverCrd(kb, crd)));
}, 120_000);

afterAll(async () => {
  // Unbind while the konnector runs, so the API's CRDs leave cluster b with their bindings (a later suite of this
  // worker binds the same APIs there, and the konnector refuses a CRD another binding owns).
  if (kb) await releaseBindings(kb, ns, [PG_BINDING, SB_BINDING], konnector ? 20_000 : 0);
  await konnector?.proc.stop();
  await s?.stop();
  await ka?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${GADGET.resource}.${GADGET.group}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${app}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
  for (const kind of ['clusterroles', 'clusterrolebindings'])
    for (const name of [`${ns}-konnector`, `${ns}-konnector-${PG_BINDING}`, `${ns}-konnector-${SB_BINDING}`])
      await kb?.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${name}`);
});

describe('kubectl bind', () => {
  it('binds an API end to end: login, Secret, export request, konnector, binding Ready, a first claim up and its status down', async () => {
    // The team pulls the konnector from a private mirror (the Secret need not exist for the Deployment to be admitted).
    const run = await cli([url(), '--accept-permission-claims', '--wait=30s', '--konnector-image-pull-secret=team-mirror']);
    await headlessLogin(await run.loginUrl(), { idp: s.idp, user, resource: PG.resource });
    await run.printed(`Konnector installed in namespace ${ns}`);
    // The Deployment's Pod, as a process: the ServiceAccount and RBAC are the ones the plugin just applied.
    konnector = await startKonnector({
      kubeconfig: await konnectorKubeconfig(b, ns),
      namespace: ns,
      logDir,
      args: ['--heartbeat-interval=2s'],
    });
    const r = await exited(run, 0);
    expect(r.stdout).toMatch(
      new RegExp(`^${PG_BINDING.replace('.', '\\.')}\\s+PostgresqlInstance \\(anynines\\.com/v1\\)\\s+\\S.*\\s+True\\s+-$`, 'm'),
    );
    expect(r.stderr).toContain(`Logged in as ${s.idp.issuer}/${user}`);

    // What the plugin left: one kubeconfig Secret, the binding through it, and on the provider the export.
    const secrets = await kubeconfigSecrets();
    expect(secrets).toHaveLength(1);
    const binding = await requireOk(kb, 'GET', `${BIND}/namespaces/${ns}/apiservicebindings/${PG_BINDING}`);
    expect(binding.spec.kubeconfigSecretRef).toEqual({ name: secrets[0], namespace: ns, key: 'kubeconfig' });
    const consumerNs = (
      await eventually('the consumer namespace', async () => {
        const list = (await requireOk(ka, 'GET', '/api/v1/namespaces')).items as O[];
        return list.find(
          (n) =>
            n.metadata.name.startsWith(`${s.prefix}-`) &&
            n.metadata.annotations?.['example-backend.klutch.anynines.com/identity']?.startsWith(`${user}#`),
        );
      })
    ).metadata.name as string;
    expect(await getObject(ka, `${BIND}/namespaces/${consumerNs}/apiserviceexports/${PG_BINDING}`)).toBeDefined();
    // The konnector heartbeats into the ClusterBinding our backend made (twice its interval is the timeout it reports).
    const cb = await eventually('a heartbeat of the konnector', async () => {
      const o = await getObject(ka, `${BIND}/namespaces/${consumerNs}/clusterbindings/cluster`);
      return o?.status?.konnectorVersion ? o : undefined;
    });
    expect(cb.status).toMatchObject({ konnectorVersion: 'v0.1.0', heartbeatInterval: '4s' });
    const deployment = await requireOk(kb, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments/konnector`);
    expect(deployment.spec.template.spec.containers[0].args).toContain(`--binding-namespace=${ns}`);
    expect(deployment.spec.template.spec.imagePullSecrets).toEqual([{ name: 'team-mirror' }]);

    // The first claim, as the plugin's example shows it, created in b: up to the provider, its status back.
    const example = parse(/<<'EOF'\n([\s\S]*?)\n\s*EOF/.exec(r.stdout)![1]!.replace(/^ {2}/gm, '')) as O;
    const claim: O = { ...example, metadata: { name: 'first', namespace: app } };
    await requireOk(kb, 'POST', pgPath(app), claim);
    const pns = await eventually(
      'the provider namespace of the app namespace',
      async () =>
        (await getObject(ka, `${BIND}/namespaces/${consumerNs}/apiservicenamespaces/${app}`))?.status?.namespace as string | undefined,
    );
    const up = await eventually('the claim upstream', () => getObject(ka, pgPath(pns, 'first')));
    expect(up.spec).toMatchObject(claim.spec);
    await requireOk(
      ka,
      'PATCH',
      `${pgPath(pns, 'first')}/status`,
      { status: { managed: { state: 'ready' } } },
      'application/merge-patch+json',
    );
    await eventually('the status in the app cluster', async () =>
      (await getObject(kb, pgPath(app, 'first')))?.status?.managed?.state === 'ready' ? true : undefined,
    );
  });

  it('binds a second API of the same provider through the same kubeconfig Secret, and lists both', async () => {
    const run = await cli([url(), '--accept-permission-claims', '--wait=30s']);
    await headlessLogin(await run.loginUrl(), { idp: s.idp, user, resource: SB.resource });
    const r = await exited(run, 0);
    expect(r.stderr).toMatch(/Updated the provider kubeconfig in Secret/);
    expect(r.stdout).toContain('Do you accept this Permission? [No,Yes] Yes (--accept-permission-claims)');
    expect(r.stdout).toMatch(
      new RegExp(`^${SB_BINDING.replace('.', '\\.')}\\s+ServiceBinding .*True\\s+secrets: Accepted, configmaps: Accepted$`, 'm'),
    );
    expect(await kubeconfigSecrets()).toHaveLength(1);
    // Bound without --konnector-image-pull-secret: the konnector still pulls with the Secret the first bind gave it.
    const deployment = await requireOk(kb, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments/konnector`);
    expect(deployment.spec.template.spec.imagePullSecrets).toEqual([{ name: 'team-mirror' }]);

    const list = await exited(await cli(['list']), 0);
    expect(list.stdout).toMatch(/^NAME\s+PROVIDER\s+READY\s+OBJECTS\s+VERSION\s+SECRET\s+AGE/m);
    expect(list.stdout).toMatch(
      new RegExp(`^${PG_BINDING.replace('.', '\\.')}\\s+.*True\\s+1 PostgresqlInstance\\s+v1\\s+kubeconfig-`, 'm'),
    );
    expect(list.stdout).toMatch(new RegExp(`^${SB_BINDING.replace('.', '\\.')}\\s+.*True\\s+0 ServiceBinding\\s+v1\\s+kubeconfig-`, 'm'));
    // As kubectl: names only, and the table without its header.
    const names = await exited(await cli(['list', '-o', 'name']), 0);
    expect(names.stdout.split('\n').filter(Boolean).sort()).toEqual(
      [PG_BINDING, SB_BINDING].map((b) => `apiservicebinding.klutch.anynines.com/${b}`).sort(),
    );
    const bare = await exited(await cli(['list', '--no-headers']), 0);
    expect(bare.stdout).not.toMatch(/^NAME\s/m);
    expect(bare.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    // As kubectl: one List document in either format.
    for (const format of ['yaml', 'json']) {
      const out = await exited(await cli(['list', '-o', format]), 0);
      const doc = (format === 'json' ? JSON.parse(out.stdout) : parse(out.stdout)) as { items: { metadata: { name: string } }[] };
      expect(doc, format).toMatchObject({ apiVersion: 'v1', kind: 'List' });
      expect(doc.items.map((b) => b.metadata.name).sort(), format).toEqual([PG_BINDING, SB_BINDING].sort());
    }
  });

  it("marks a version the provider deprecates in list, and the app developer's requests get its warning", async () => {
    const crd = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${PG_BINDING}`;
    const warning = `${PG.group}/v1 ${PG.resource} is deprecated; move to v2 by 2027-06-30`;
    const deprecate = (on: boolean) =>
      requireOk(
        ka,
        'PATCH',
        crd,
        on
          ? [
              { op: 'add', path: '/spec/versions/0/deprecated', value: true },
              { op: 'add', path: '/spec/versions/0/deprecationWarning', value: warning },
            ]
          : [
              { op: 'remove', path: '/spec/versions/0/deprecated' },
              { op: 'remove', path: '/spec/versions/0/deprecationWarning' },
            ],
        'application/json-patch+json',
      );
    await deprecate(true);
    try {
      // The backend derives the export again from the changed CRD; the konnector makes the app cluster's CRD the same.
      await eventually('the deprecation in the app cluster', async () =>
        (await getObject(kb, crd))?.spec?.versions?.[0]?.deprecationWarning === warning ? true : undefined,
      );
      // why reads a claim of the deprecated version as well (and, like list, tries again on a 429 right after the change).
      const why = await exited(
        await startCli(['why', 'postgresqlinstance/first', '-n', app], { kubeconfig: b.kubeconfig, closeStdin: true }),
        0,
      );
      expect(why.stdout).toContain(`${PG_BINDING} ${app}/first, through APIServiceBinding ${ns}/${PG_BINDING}:`);
      const list = await exited(await cli(['list']), 0);
      expect(list.stdout).toMatch(/^NAME\s+PROVIDER\s+READY\s+OBJECTS\s+VERSION\s+SECRET\s+AGE\s+MESSAGE/m);
      expect(list.stdout).toMatch(
        new RegExp(
          `^${PG_BINDING.replace('.', '\\.')}\\s+.*True\\s+1 PostgresqlInstance\\s+v1 \\(deprecated\\)\\s+kubeconfig-.*move to v2 by 2027-06-30`,
          'm',
        ),
      );
      expect(list.stdout).toMatch(new RegExp(`^${SB_BINDING.replace('.', '\\.')}\\s+.*\\s+0 ServiceBinding\\s+v1\\s+kubeconfig-`, 'm'));
      // What kubectl prints as "Warning: ...": the API server's header on any request to the deprecated version.
      const r = await kb.request('GET', `/apis/${PG.group}/v1/namespaces/${app}/${PG.resource}`);
      expect(r.code).toBe(200);
      expect(r.warnings).toContain(warning);
    } finally {
      await deprecate(false);
      await eventually('the deprecation gone from the app cluster', async () =>
        (await getObject(kb, crd))?.spec?.versions?.[0]?.deprecated ? undefined : true,
      );
    }
  });

  it("lists a ServiceBinding's time left and its rotation under way, as the konnector carried them down", async () => {
    const sbPath = (namespace: string, name = '') => `/apis/${SB.group}/v1/namespaces/${namespace}/${SB.resource}${name ? `/${name}` : ''}`;
    const expiresAt = new Date(Date.now() + 12 * 60_000 + 30_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await requireOk(kb, 'POST', sbPath(app), {
      apiVersion: `${SB.group}/v1`,
      kind: 'ServiceBinding',
      metadata: { name: 'brief', namespace: app },
      spec: { instanceRef: 'first', serviceInstanceType: 'postgresql', compositionRef: { name: 'cnpg-servicebinding' }, expiresAt },
    });
    try {
      const pns = await eventually('the binding upstream', async () => {
        const list = (await requireOk(ka, 'GET', `/apis/${SB.group}/v1/${SB.resource}`)).items as O[];
        return list.find((o) => o.metadata.name === 'brief')?.metadata.namespace as string | undefined;
      });
      // What the composition function keeps on the claim once the new user works (functions/dataservices/rotation.ts).
      const retiresAt = new Date(Date.now() + 4 * 60_000 + 30_000).toISOString().replace(/\.\d+Z$/, 'Z');
      const rotation = { generation: 1, requested: '1', rotatedAt: expiresAt.replace(/T.*/, 'T00:00:00Z'), retiresAt };
      await requireOk(ka, 'PATCH', `${sbPath(pns, 'brief')}/status`, { status: { managed: { rotation } } }, 'application/merge-patch+json');
      await eventually('the rotation in the app cluster', async () =>
        (await getObject(kb, sbPath(app, 'brief')))?.status?.managed?.rotation?.retiresAt === retiresAt ? true : undefined,
      );
      const list = await exited(await cli(['list']), 0);
      expect(list.stdout).toMatch(
        new RegExp(
          `^${SB_BINDING.replace('.', '\\.')}\\s+.*1 ServiceBinding\\s+v1\\s+kubeconfig-.*${app}/brief expires in 1[23]m; ${app}/brief's old credentials work for [45]m$`,
          'm',
        ),
      );
    } finally {
      await requireOk(kb, 'DELETE', sbPath(app, 'brief'));
      await eventually('the binding gone upstream', async () => {
        const list = (await requireOk(ka, 'GET', `/apis/${SB.group}/v1/${SB.resource}`)).items as O[];
        return list.some((o) => o.metadata.name === 'brief') ? undefined : true;
      });
    }
  });

  it('says why a claim is not Ready, hop by hop, in the app cluster: the data service still being made, then failing', async () => {
    const pns = await eventually('claim upstream', async () => {
      const list = (await requireOk(ka, 'GET', `/apis/anynines.com/v1/${PG.resource}`)).items as O[];
      return list.find((o) => o.metadata.name === 'first')?.metadata.namespace as string | undefined;
    });
    // What Crossplane and the composition function write on the control plane, as the konnector carries it down.
    const answer = async (dataService: O) => {
      const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const conditions = [
        { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: at },
        { ...dataService, type: 'DataServiceReady', lastTransitionTime: at },
        { type: 'Ready', status: 'False', reason: 'Creating', lastTransitionTime: at },
      ];
      await requireOk(ka, 'PATCH', `${pgPath(pns, 'first')}/status`, { status: { conditions } }, 'application/merge-patch+json');
      await eventually('the conditions in the app cluster', async () =>
        ((await getObject(kb, pgPath(app, 'first')))?.status?.conditions as O[] | undefined)?.some(
          (c) => c.type === 'DataServiceReady' && c.reason === dataService.reason,
        )
          ? true
          : undefined,
      );
      // As the app developer types it: the singular, in the claim's namespace.
      return exited(await startCli(['why', 'postgresqlinstance/first', '-n', app], { kubeconfig: b.kubeconfig, closeStdin: true }), 0);
    };
    const making = await answer({
      status: 'False',
      reason: 'Provisioning',
      message: 'cnpg postgresql: Setting up primary: Creating primary instance first-1',
    });
    expect(making.stdout).toContain(`${PG_BINDING} ${app}/first, through APIServiceBinding ${ns}/${PG_BINDING}:`);
    expect(making.stdout).toMatch(new RegExp(`^  ok +binding +APIServiceBinding ${ns}/${PG_BINDING.replace('.', '\\.')} Ready$`, 'm'));
    expect(making.stdout).toMatch(new RegExp(`^  ok +konnector +runs in namespace ${ns} \\(Lease klutch-bind renewed \\d+ s ago\\)$`, 'm'));
    expect(making.stdout).toMatch(/^ {2}NOT +data service +DataServiceReady False \(Provisioning\): cnpg postgresql: Setting up primary/m);
    expect(making.stdout).toContain("Held by the data service: the backend's operator is still making it");
    // The claim says the same on itself: the konnector names the hop in its Ready condition (lib/claim-hold.ts).
    const ready = ((await getObject(kb, pgPath(app, 'first')))?.status?.conditions as O[]).find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({
      status: 'False',
      reason: 'Provisioning',
      message: expect.stringMatching(
        /^held by the data service: DataServiceReady False \(Provisioning\): cnpg postgresql: Setting up primary: Creating primary instance first-1\. What to do: the backend's operator is still making it/,
      ),
    });
    const failing = await answer({
      status: 'False',
      reason: 'ProvisioningFailed',
      message: 'cnpg postgresql: Unable to create required cluster objects: exceeded quota',
    });
    expect(failing.stdout).toContain("Held by the data service: the backend's operator reports a failure");
    // An app developer who may read the claim, the bindings and the konnector's Pods but not its Lease: whether the
    // konnector runs is not known, which is not "has no Lease" (this one runs as a process: no Pods either).
    const dev = `why-dev-${rand()}`;
    const grant = (kind: 'Role' | 'ClusterRole', name: string, namespace: string | undefined, rules: O[]) => [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) }, rules },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: `${kind}Binding`,
        metadata: { name, ...(namespace ? { namespace } : {}) },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
        subjects: [{ kind: 'User', name: 'developer', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    ];
    const read = ['get', 'list', 'watch'];
    for (const o of [
      ...grant('ClusterRole', dev, undefined, [
        { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: read },
      ]),
      // The bindings only where they are, in the konnector's namespace: no cluster-wide list.
      ...grant('Role', dev, ns, [
        { apiGroups: ['klutch.anynines.com'], resources: ['apiservicebindings'], verbs: read },
        { apiGroups: [''], resources: ['pods'], verbs: read },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: read },
      ]),
      ...grant('Role', dev, app, [{ apiGroups: ['anynines.com'], resources: [PG.resource], verbs: read }]),
    ])
      await apply(kb, o);
    const devConfig = join(logDir, 'developer.kubeconfig');
    writeFileSync(devConfig, bearerKubeconfigYaml(b.name, b.server, b.ca, 'developer', b.tokens.developer!));
    // RBAC takes a moment to see the grants; a refusal of the claim or the bindings ends `why` with 1.
    const unknown = await eventually(
      'why as the developer, past RBAC',
      async () => {
        const run = await startCli(['why', 'postgresqlinstance/first', '-n', app, '--konnector-namespace', ns], {
          kubeconfig: devConfig,
          closeStdin: true,
        });
        const r = await run.done;
        if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}${r.stdout}`);
        return r;
      },
      20_000,
    );
    expect(unknown.stdout).toMatch(
      new RegExp(
        `^ {2}NOT +konnector +in namespace ${ns}: its Lease klutch-bind cannot be read \\(.*forbidden.*\\), so whether it runs is not known`,
        'm',
      ),
    );
    expect(unknown.stdout).toContain(`ask for get on leases.coordination.k8s.io in namespace ${ns}`);
    expect(unknown.stdout).not.toContain('has no Lease');
    // Without the konnector's namespace (the default, klutch-bind, is not this one): what to ask for, not "no binding".
    const nowhere = await exited(
      await startCli(['why', 'postgresqlinstance/first', '-n', app], { kubeconfig: devConfig, closeStdin: true }),
      1,
    );
    expect(nowhere.stderr).toContain(
      `may list apiservicebindings.klutch.anynines.com neither cluster-wide nor in namespace klutch-bind or ${app}`,
    );
    expect(nowhere.stderr).toContain('--konnector-namespace');
    // An API no binding serves: said, with what to do.
    const unbound = await exited(await startCli(['why', 'widgets/x', '-n', app], { kubeconfig: b.kubeconfig, closeStdin: true }), 1);
    expect(unbound.stderr).toContain('no APIServiceBinding of this cluster serves "widgets"');
  });

  it('removes a binding in the konnector’s order: its claim goes in both clusters first, nothing stranded', async () => {
    const pns =
      (await getObject(kb, pgPath(app, 'first'))) &&
      (await eventually('claim upstream', async () => {
        const list = (await requireOk(ka, 'GET', `/apis/anynines.com/v1/${PG.resource}`)).items as O[];
        return list.find((o) => o.metadata.name === 'first')?.metadata.namespace as string | undefined;
      }));
    const r = await exited(await cli(['remove', PG_BINDING, '--yes', '--timeout=40s']), 0);
    expect(r.stdout).toContain(`Removed ${PG_BINDING}.`);
    expect(await getObject(kb, pgPath(app, 'first'))).toBeUndefined();
    expect(await getObject(ka, pgPath(pns!, 'first'))).toBeUndefined();
    expect(await getObject(kb, `${BIND}/namespaces/${ns}/apiservicebindings/${PG_BINDING}`)).toBeUndefined();
    expect(await getObject(kb, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${PG_BINDING}`)).toBeUndefined();
    expect(await getObject(kb, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${ns}-konnector-${PG_BINDING}`)).toBeUndefined();
    // ServiceBinding still binds through the Secret: it stays.
    expect(await kubeconfigSecrets()).toHaveLength(1);
  });

  it('binds from a request file with apiservice -f; --dry-run (from the file, after a login) prints the objects and creates nothing', async () => {
    const [secret] = await kubeconfigSecrets();
    const file = join(logDir, 'request.yaml');
    writeFileSync(
      file,
      `apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nmetadata:\n  name: ${PG_BINDING}\nspec:\n  resources:\n  - group: ${PG.group}\n    resource: ${PG.resource}\n`,
    );
    const requests = async () => ((await requireOk(ka, 'GET', `${BIND}/apiserviceexportrequests`)).items as O[]).length;
    const before = await requests();
    // Both dry runs: from the file, and after a login (kubectl bind <url> --dry-run).
    const login = await cli([url(), '--dry-run', '--accept-permission-claims']);
    const [fromFile, afterLogin] = await Promise.all([
      exited(await cli(['apiservice', '-f', file, '--remote-kubeconfig-name', secret!, '--dry-run']), 0),
      headlessLogin(await login.loginUrl(), { idp: s.idp, user, resource: PG.resource }).then(() => exited(login, 0)),
    ]);
    for (const dry of [fromFile, afterLogin]) {
      const objects = dry.stdout
        .split(/^---$/m)
        .map((d) => parse(d) as O | null)
        .filter((o): o is O => Boolean(o));
      expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['APIServiceExportRequest', 'Deployment', 'APIServiceBinding']));
      expect(objects.find((o) => o.kind === 'APIServiceBinding')!.spec.kubeconfigSecretRef.name).toBe(secret);
      expect(dry.stderr).toMatch(/Dry run: none of these \d+ objects was created/);
    }
    // Without the konnector: the access whoever runs one must grant it, and no konnector.
    const skipped = await exited(
      await cli(['apiservice', '-f', file, '--remote-kubeconfig-name', secret!, '--dry-run', '--skip-konnector']),
      0,
    );
    const kinds = skipped.stdout
      .split(/^---$/m)
      .map((d) => (parse(d) as O | null)?.kind)
      .filter(Boolean);
    expect(kinds).toEqual(expect.arrayContaining(['APIServiceExportRequest', 'ClusterRole', 'ClusterRoleBinding', 'APIServiceBinding']));
    expect(kinds).not.toContain('Deployment');
    expect(await requests()).toBe(before);
    expect(await getObject(kb, `${BIND}/namespaces/${ns}/apiservicebindings/${PG_BINDING}`)).toBeUndefined();

    const r = await exited(await cli(['apiservice', '-f', file, '--remote-kubeconfig-name', secret!, '--wait=30s']), 0);
    expect(r.stderr).toContain(`APIServiceBinding ${ns}/${PG_BINDING} created.`);
    expect(r.stdout).toMatch(new RegExp(`^${PG_BINDING.replace('.', '\\.')}\\s+PostgresqlInstance .*True`, 'm'));
  });

  it('says what failed: unreachable backend, wrong document version, login timeout, Ctrl-C, a required claim declined', async () => {
    const [free] = await freePorts(1);
    const old = http.createServer((_, res) =>
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          kind: 'BindingProvider',
          apiVersion: 'v1alpha1',
          providerPrettyName: 'old',
          version: 'v0.2.0',
          authenticationMethods: [{ method: 'OAuth2CodeGrant', oauth2CodeGrant: { authenticatedURL: 'http://127.0.0.1:1/authorize' } }],
        }),
      ),
    );
    await new Promise<void>((r) => old.listen(0, '127.0.0.1', r));
    try {
      const declined = await cli([url(), '--wait=0', '--skip-konnector'], { closeStdin: false });
      const [unreachable, version, timeout, interrupted] = await Promise.all([
        exited(await cli([`http://127.0.0.1:${free}/export`]), 1),
        exited(await cli([`http://127.0.0.1:${(old.address() as AddressInfo).port}/export`]), 1),
        exited(await cli([url(), '--login-timeout=2s']), 3),
        (async () => {
          const run = await cli([url()]);
          await run.loginUrl();
          run.child.kill('SIGINT'); // Ctrl-C
          return exited(run, 130);
        })(),
        (async () => {
          await headlessLogin(await declined.loginUrl(), { idp: s.idp, user, resource: GADGET.resource });
          await declined.printed(/provider exported it/);
          await eventually('the prompt', async () =>
            declined.stdout().includes('Do you accept this Permission? [No,Yes]') ? true : undefined,
          );
          declined.answer('no');
        })(),
      ]);
      expect(unreachable.stderr).toMatch(
        /^error: cannot reach the bind backend at http:\/\/127\.0\.0\.1:\d+\/export \(4 tries\): .*ECONNREFUSED/m,
      );
      expect(version.stderr).toContain('is version v0.2.0; kubectl bind needs v0.3.0 or later');
      expect(timeout.stderr).toContain('error: no login within 2s');
      expect(interrupted.stderr).toContain('error: interrupted while waiting for the login');
      const d = await exited(declined, 4);
      expect(d.stdout).toContain('required:   yes');
      expect(d.stderr).toContain('permission claim configmaps is required by the provider and was rejected; nothing was bound');
      expect(await getObject(kb, `${BIND}/namespaces/${ns}/apiservicebindings/${GADGET.resource}.${GADGET.group}`)).toBeUndefined();
    } finally {
      old.close();
    }
  });

  it('refuses a provider whose kubeconfig runs a program: nothing runs, nothing is stored', async () => {
    // A malicious bind backend: its BindingResponse (for the right session) carries an exec kubeconfig.
    const marker = join(logDir, `pwned-${rand()}`);
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: default, cluster: {server: "${a.server}"}}]`,
      `users: [{name: default, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "touch ${marker}"]}}}]`,
      `contexts: [{name: default, context: {cluster: default, user: default, namespace: cluster-evil}}]`,
      'current-context: default',
      '',
    ].join('\n');
    const evil = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (u.pathname === '/export') {
        const authenticatedURL = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/authorize`;
        return res.writeHead(200, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            kind: 'BindingProvider',
            apiVersion: 'v1alpha1',
            providerPrettyName: 'evil',
            version: 'v0.4.0',
            authenticationMethods: [{ method: 'OAuth2CodeGrant', oauth2CodeGrant: { authenticatedURL } }],
          }),
        );
      }
      const response = bindingResponse({
        sid: u.searchParams.get('s')!,
        issuer: 'https://idp.evil',
        subject: 'x',
        kubeconfig,
        ...PG,
        permissionClaims: [],
      });
      res.writeHead(302, { Location: responseRedirect(`http://localhost:${u.searchParams.get('p')}/callback`, response) }).end();
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const secretsBefore = await kubeconfigSecrets();
      const run = await cli([`http://127.0.0.1:${(evil.address() as AddressInfo).port}/export`]);
      const page = await new Browser().get(await run.loginUrl());
      await run.done;
      expect(existsSync(marker)).toBe(false);
      expect(await kubeconfigSecrets()).toEqual(secretsBefore);
      expect(page.status).toBe(400);
      const r = await exited(run, 1);
      expect(r.stderr).toMatch(/^error: .*users\[default\]\.user\.exec runs a program on this machine/m);
      expect(r.stderr).toContain('nothing was stored or run');
    } finally {
      evil.close();
    }
  });
});

describe('kubectl bind completion', () => {
  it("completes through kubectl's own plugin completion: commands, flags and their values, files where a file goes", async () => {
    // As a user sets it up (docs/kubectl-bind.md): kubectl-bind and kubectl_complete-bind on PATH, then
    // `kubectl __complete`, which every shell's kubectl completion script runs.
    const bin = mkdtempSync(join(tmpdir(), 'klutch-completion-'));
    onTestFinished(() => rmSync(bin, { recursive: true, force: true }));
    writeFileSync(join(bin, 'kubectl-bind'), `#!/bin/sh\nexec "${process.execPath}" "${await cliBundle()}" "$@"\n`, { mode: 0o755 });
    writeFileSync(join(bin, 'kubectl_complete-bind'), completeScript(), { mode: 0o755 });
    const kubectl = (...words: string[]) => {
      const r = spawnSync(kubeBinaryPath(), ['kubectl', '__complete', 'bind', ...words], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.split('\n').filter(Boolean);
    };
    expect(kubectl('')).toEqual([
      'apiservice\tbind with an export request you already have',
      'list\tthe bindings of this cluster',
      "remove\tunbind: deletes the API's objects here and on the provider",
      'why\twhy a claim is not Ready: each hop, and the one that holds it',
      "version\tthe plugin's version",
      "help\ta command's help",
      ':4',
    ]);
    expect(kubectl('li')).toEqual(['list\tthe bindings of this cluster', ':4']);
    expect(kubectl('list', '--no')).toEqual([expect.stringMatching(/^--no-headers\t/), ':4']);
    expect(kubectl('list', '-o', '')).toEqual(['yaml', 'json', 'name', ':4']);
    expect(kubectl('apiservice', '--output=j')).toEqual(['--output=json', ':4']);
    // -f takes a file: the shell completes file names (directive 0).
    expect(kubectl('apiservice', '-f', '')).toEqual([':0']);
    expect(kubectl('remove', 'postgresqlinstances.anynines.com', '--y')).toEqual([expect.stringMatching(/^--yes\t/), ':4']);
  });
});
