/**
 * Attacks from the provider side on the konnector, on the shared clusters: `a` is the control plane, made the way our
 * backend leaves it with claimed objects shared by name (harness/parts/provider-side.ts, `claimedAccess: Object`), `b`
 * the app cluster, where the bundled konnector runs with its synthesized RBAC. What crosses from the provider is data,
 * never configuration: a kubeconfig is reduced to server, CA and token (pinned on rotation), reserved labels do not
 * travel, claimed objects are read by name only, and names come from the binding.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Annotations,
  BIND_API_VERSION,
  Kinds,
  KUBECONFIG_SECRET_KEY,
  providerKubeconfigYaml,
  type AcceptablePermissionClaim,
  type PermissionClaim,
} from '../../exports/bind-api';
import { cluster, controlPlanes } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import {
  bindApp,
  createBinding,
  grantApi,
  installKonnectorAccess,
  startKonnector,
  type KonnectorProcess,
} from '../../harness/parts/konnector';
import { applyAt, eventually, getObject, kubeFor, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import { providerSide, type ProviderSide } from '../../harness/parts/provider-side';
import type { Crd } from '../../lib/xcrd';

const id = Math.random().toString(36).slice(2, 8);
const group = `sk${id}.klutch-kit.test`;
const ns = `skn-${id}`; // the konnector's namespace in b
const app = `ska-${id}`; // where the app's objects live in b
const CLAIMS: PermissionClaim[] = [{ group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' } }];
const accepted: AcceptablePermissionClaim[] = CLAIMS.map((c) => ({ ...c, state: 'Accepted' }));

/** A small namespaced CRD of our own group, so no other suite on the shared clusters has it. */
const crdNamed = (plural: string, kind: string): Crd =>
  ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { size: { type: 'integer' } } },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  }) as unknown as Crd;
const widgets = crdNamed('widgets', 'Widget');
const sprockets = crdNamed('sprockets', 'Sprocket');

let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let provider: ProviderSide;
let konnector: KonnectorProcess;
let logDir: string;
const W = `/apis/${group}/v1`;
const widget = (namespace: string, name = '') => `${W}/namespaces/${namespace}/widgets${name ? `/${name}` : ''}`;
const binding = (name: string) => `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicebindings/${name}`;
const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
const condition = (o: WireObject | undefined, type: string) => (o?.status?.conditions ?? []).find((c: WireObject) => c.type === type);
const conditionOf = (name: string, type: string, ok: (c: WireObject) => boolean) =>
  eventually(`${type} of APIServiceBinding ${name}`, async () => {
    const c = condition(await getObject(kb, binding(name)), type);
    return c && ok(c) ? c : undefined;
  });
const mapped = (namespace: string) =>
  eventually(
    `APIServiceNamespace ${namespace} assigned`,
    async () =>
      (await getObject(ka, `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/apiservicenamespaces/${namespace}`))
        ?.status?.namespace as string | undefined,
  );
const createWidget = (name: string, metadata: Record<string, unknown> = {}) =>
  requireOk(kb, 'POST', widget(app), {
    apiVersion: `${group}/v1`,
    kind: 'Widget',
    metadata: { name, namespace: app, ...metadata },
    spec: { size: 1 },
  });

beforeAll(async () => {
  a = await cluster('a');
  b = await cluster('b');
  ka = kubeFor(a);
  kb = kubeFor(b);
  provider = await providerSide({ provider: a, crd: widgets, permissionClaims: CLAIMS, claimedAccess: 'Object' });
  const kubeconfig = await installKonnectorAccess(b, ns, [{ group, resource: 'widgets', claimed: ['secrets'] }]);
  await requireOk(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: app } });
  logDir = join((await controlPlanes()).runDir, 'konnector', ns);
  konnector = await startKonnector({ kubeconfig, namespace: ns, logDir, args: ['--heartbeat-interval=1s'] });
  await bindApp(b, ns, provider, provider.exportName, accepted);
  await conditionOf(provider.exportName, 'Ready', (c) => c.status === 'True');
}, 120_000);

afterAll(async () => {
  await konnector?.proc.stop();
  // Nothing serves these any more: release finalizers so the namespaces and CRDs can go.
  const unfinalize = async (kube: Kube, list: string) => {
    const items = ((await kube.request('GET', list)).body.items ?? []) as WireObject[];
    for (const o of items)
      await kube.request(
        'PATCH',
        `${list.replace(/\?.*$/, '')}/${o.metadata.name}`,
        { metadata: { finalizers: null } },
        'application/merge-patch+json',
      );
  };
  if (kb) {
    await unfinalize(kb, widget(app));
    await unfinalize(kb, `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicebindings`);
    for (const c of [widgets, sprockets]) await kb.request('DELETE', crdPath(c.metadata.name));
    await kb.request('DELETE', `/api/v1/namespaces/${app}`);
    await kb.request('DELETE', `/api/v1/namespaces/${ns}`);
  }
  await provider?.remove();
  for (const c of [widgets, sprockets]) await ka?.request('DELETE', crdPath(c.metadata.name));
});

/** A kubeconfig for the provider with other `user` fields or another server, as a malicious provider would hand out. */
const tampered = (o: { user?: Record<string, unknown>; server?: string } = {}) => {
  const legit = providerKubeconfigYaml(
    { server: o.server ?? a.server, ca: a.ca },
    provider.clusterNamespace,
    tokenOf(provider.kubeconfig()),
  );
  if (!o.user) return legit;
  const doc = parse(legit) as { users: { user: Record<string, unknown> }[] };
  doc.users[0]!.user = { ...doc.users[0]!.user, ...o.user };
  return stringify(doc);
};
const tokenOf = (kubeconfig: string): string => (parse(kubeconfig) as { users: { user: { token: string } }[] }).users[0]!.user.token;

describe('kubeconfigs from the provider', () => {
  const marker = (what: string) => join(logDir, `ran-${what}`);
  const attacks: [string, () => Record<string, unknown>, string][] = [
    [
      'exec',
      () => ({
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1beta1',
          command: '/bin/sh',
          args: [
            '-c',
            `touch ${marker('exec')}; echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"x"}}'`,
          ],
          interactiveMode: 'Never',
        },
      }),
      'users[default].user.exec',
    ],
    [
      'auth-provider',
      () => ({
        'auth-provider': {
          name: 'gcp',
          config: { 'cmd-path': '/bin/sh', 'cmd-args': `-c "touch ${marker('auth-provider')}"`, 'token-key': '{.token}' },
        },
      }),
      'users[default].user.auth-provider',
    ],
    ['tokenFile', () => ({ tokenFile: join(logDir, 'konnector.kubeconfig') }), 'users[default].user.tokenFile'],
  ];

  it.each(attacks)(
    'a binding whose kubeconfig Secret holds a kubeconfig with %s: SecretValid=False naming the field, and nothing ran',
    async (what, user, field) => {
      const secret = `evil-${what.toLowerCase()}`;
      await requireOk(kb, 'POST', `/api/v1/namespaces/${ns}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secret, namespace: ns },
        data: { [KUBECONFIG_SECRET_KEY]: Buffer.from(tampered({ user: user() })).toString('base64') },
      });
      const name = `${what.toLowerCase()}.evil.klutch-kit.test`;
      await createBinding(kb, ns, name, secret);
      const c = await conditionOf(name, 'SecretValid', (x) => x.status !== 'Unknown');
      expect(c).toMatchObject({ status: 'False', reason: 'KubeconfigUnsafe' });
      expect(c.message).toContain(`Secret ${ns}/${secret} key "kubeconfig": ${field}`);
      expect(condition(await getObject(kb, binding(name)), 'Connected')?.status).toBe('Unknown');
      expect(existsSync(marker(what)), 'the program named by the kubeconfig never ran').toBe(false);
    },
  );

  it('a rotated provider kubeconfig with exec, or another server, is not copied; the binding keeps syncing; a token rotation is', async () => {
    const ref = (await getObject(kb, binding(provider.exportName)))!.spec.kubeconfigSecretRef;
    const appSecret = async () =>
      Buffer.from((await getObject(kb, `/api/v1/namespaces/${ns}/secrets/${ref.name}`))!.data.kubeconfig, 'base64').toString();
    const before = await appSecret();
    const providerSecret = `/api/v1/namespaces/${provider.clusterNamespace}/secrets/kubeconfig`;
    const rewrite = (text: string) =>
      applyAt(ka, providerSecret, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'kubeconfig', namespace: provider.clusterNamespace },
        data: { [KUBECONFIG_SECRET_KEY]: Buffer.from(text).toString('base64') },
      });

    /** Waits until the heartbeat either copied the provider's kubeconfig or refused it with `reason`. */
    const outcome = (reason: string) =>
      eventually(`the rotation copied or refused (${reason})`, async () => {
        if ((await appSecret()) !== before) return 'copied';
        const c = condition(await getObject(kb, binding(provider.exportName)), 'KubeconfigCurrent');
        return c?.status === 'False' && c.reason === reason ? c : undefined;
      });

    await rewrite(tampered({ user: attacks[0]![1]() }));
    const unsafe = await outcome('KubeconfigUnsafe');
    expect(unsafe, "the app cluster's kubeconfig Secret is unchanged").not.toBe('copied');
    expect(unsafe).toMatchObject({ reason: 'KubeconfigUnsafe', severity: 'Warning' });
    expect(unsafe.message).toContain(`Secret ${provider.clusterNamespace}/kubeconfig key "kubeconfig": users[default].user.exec`);
    expect(await appSecret(), "the app cluster's kubeconfig Secret is unchanged").toBe(before);
    expect(existsSync(marker('exec'))).toBe(false);
    // The binding keeps syncing with the credentials it has.
    await createWidget('after-unsafe');
    const pns = await mapped(app);
    await eventually('a widget created after the refused rotation goes up', () => getObject(ka, widget(pns, 'after-unsafe')));

    await rewrite(tampered({ server: 'https://provider.evil.klutch-kit.test:6443' }));
    const moved = await outcome('KubeconfigMoved');
    expect(moved).not.toBe('copied');
    expect(moved.message).toContain('https://provider.evil.klutch-kit.test:6443');
    expect(await appSecret()).toBe(before);

    const revokeOld = await provider.rotate();
    await eventually('the rotated token in the app cluster', async () =>
      (await appSecret()) === provider.kubeconfig() ? true : undefined,
    );
    await revokeOld();
    await conditionOf(provider.exportName, 'KubeconfigCurrent', (c) => c.status === 'True');
    await createWidget('after-rotation');
    await eventually('a widget created after the rotation goes up', () => getObject(ka, widget(pns, 'after-rotation')));
  }, 60_000);
});

describe('reserved labels and annotations', () => {
  it('never go up with a claim; the app’s own do', async () => {
    await createWidget('labelled', {
      labels: { 'crossplane.io/claim-namespace': 'kube-system', team: 'a' },
      annotations: { 'crossplane.io/external-name': 'x', note: 'mine' },
    });
    const pns = await mapped(app);
    const up = await eventually('the labelled widget upstream', () => getObject(ka, widget(pns, 'labelled')));
    expect(up!.metadata.labels).toEqual({ team: 'a' });
    expect(up!.metadata.annotations).toEqual({ note: 'mine', [Annotations.bound]: 'true' });
  });
});

describe('claimed objects shared by name', () => {
  it('<claim>-creds comes down without list rights; an unrelated Secret of the provider namespace never does', async () => {
    await createWidget('db');
    const pns = await mapped(app);
    const up = await eventually('db upstream', () => getObject(ka, widget(pns, 'db')));
    const consumer = kubeFor(a, 'consumer', tokenOf(provider.kubeconfig()));
    const review = await requireOk(consumer, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'list', resource: 'secrets', namespace: pns } },
    });
    expect(review.status.allowed, 'the consumer may not list Secrets in its provider namespace').toBe(false);

    const secret = (name: string, owned: boolean) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace: pns,
        ...(owned ? { ownerReferences: [{ apiVersion: `${group}/v1`, kind: 'Widget', name: 'db', uid: up!.metadata.uid }] } : {}),
      },
      data: { password: Buffer.from('s3cret').toString('base64') },
    });
    await requireOk(ka, 'POST', `/api/v1/namespaces/${pns}/secrets`, secret('provider-internal', false));
    await requireOk(ka, 'POST', `/api/v1/namespaces/${pns}/secrets`, secret('db-creds', false));
    await provider.shareClaimed(pns, 'db');
    const down = await eventually('db-creds in the app namespace', () => getObject(kb, `/api/v1/namespaces/${app}/secrets/db-creds`));
    expect(Buffer.from(down!.data.password, 'base64').toString()).toBe('s3cret');
    expect(await getObject(kb, `/api/v1/namespaces/${app}/secrets/provider-internal`)).toBeUndefined();
    expect(condition(await getObject(kb, binding(provider.exportName)), 'InformersSynced')?.status).toBe('True');
    // Updates follow, and a Secret that is no longer shared goes.
    await requireOk(
      ka,
      'PATCH',
      `/api/v1/namespaces/${pns}/secrets/db-creds`,
      { data: { password: 'bjN3' } },
      'application/merge-patch+json',
    );
    await eventually('the new password', async () => {
      const o = await getObject(kb, `/api/v1/namespaces/${app}/secrets/db-creds`);
      return o?.data.password === 'bjN3' ? true : undefined;
    });
    await requireOk(ka, 'DELETE', `/api/v1/namespaces/${pns}/secrets/db-creds`);
    await eventually('db-creds gone from the app namespace', async () =>
      (await getObject(kb, `/api/v1/namespaces/${app}/secrets/db-creds`)) ? undefined : true,
    );
  });
});

describe('names come from the binding', () => {
  it('an export whose spec names another CRD than the binding: SchemaInSync=False, no CRD created', async () => {
    const name = `gadgets.${group}`;
    const exports = `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/apiserviceexports`;
    const body = {
      apiVersion: BIND_API_VERSION,
      kind: Kinds.APIServiceExport,
      metadata: { name, namespace: provider.clusterNamespace },
      spec: { ...sprockets.spec, informerScope: 'Namespaced' },
    };
    // A compromised control plane: its APIServiceExport CRD no longer insists on `<plural>.<group>` names (the CRD of
    // this suite's cluster slot, restored at once).
    const exportCrd = crdPath('apiserviceexports.klutch.anynines.com');
    const original = (await getObject(ka, exportCrd))!;
    const lax = structuredClone(original);
    for (const v of lax.spec.versions) delete v.schema.openAPIV3Schema['x-kubernetes-validations'];
    await requireOk(ka, 'PUT', exportCrd, lax);
    try {
      await eventually('the rogue export accepted', async () =>
        (await ka.request('POST', exports, body)).code === 201 ? true : undefined,
      );
    } finally {
      const now = (await getObject(ka, exportCrd))!;
      await requireOk(ka, 'PUT', exportCrd, { ...now, spec: original.spec });
    }
    // The konnector may manage what the export describes: only the name check stands between it and that CRD.
    await grantApi(b, ns, { group, resource: 'sprockets' });
    await createBinding(kb, ns, name, (await getObject(kb, binding(provider.exportName)))!.spec.kubeconfigSecretRef.name);
    const c = await eventually('the export refused, or the CRD it names created', async () => {
      if (await getObject(kb, crdPath(`sprockets.${group}`))) return { reason: `CRD sprockets.${group} created` } as WireObject;
      const x = condition(await getObject(kb, binding(name)), 'SchemaInSync');
      return x?.status === 'False' ? x : undefined;
    });
    expect(c.reason).toBe('ExportNameMismatch');
    expect(c.message).toContain(`APIServiceExport ${provider.clusterNamespace}/${name} describes sprockets.${group}`);
    expect(await getObject(kb, crdPath(`sprockets.${group}`)), 'no CRD of the name the provider chose').toBeUndefined();
    expect(await getObject(kb, crdPath(name))).toBeUndefined();
  });
});
