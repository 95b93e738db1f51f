/**
 * Binding without a browser (issue 21, item 2): a machine identity — a CI pipeline's OAuth2 client — runs
 * `kubectl bind <url> --client-id … --client-secret-file …` against our bundled backend (`--machine-bind`) on provider
 * cluster `a` and app cluster `b`, with the real OpenID provider issuing JWT access tokens (client-credentials grant,
 * resource indicators). The plugin runs as a process, as in CI; the konnector Deployment's Pod is played by the
 * bundled konnector as a process under that Deployment's ServiceAccount, as in cli.test.ts.
 *
 * It shows: the machine bind yields a working binding (a claim goes up, its status comes down) and the same consumer
 * objects a browser bind makes; binding again reuses the consumer; the backend refuses a token for another audience,
 * an expired one, one of another issuer (re-signed, and one from a second real provider), an unsigned one, a forged
 * one and an ID-token-typed one, with nothing created; a client the template's rule does not name gets a 403 naming
 * the API and the client, counted and audited, nothing created, and `/resources` lists only what each client may
 * bind, and a kubeconfig from a machine bind cannot take a refused API with an export request; the secret is never
 * on the plugin's command line, and a literal `--client-secret` is refused. A backend the user typed whose /export
 * names a provider or bind URLs of another host (an attacker's, played by a loopback collector) gets no request at all.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { parse } from 'yaml';
import { decodeJwt, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { Labels } from '../../backend/labels';
import { identityHash } from '../../backend/provision/identity';
import { startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { waitEstablished } from '../../harness/parts/bind-backend';
import { bindFlow, browserLogin } from '../../harness/parts/bind-flow';
import { startCli, type CliRun } from '../../harness/parts/cli';
import { cluster, controlPlanes } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { konnectorKubeconfig, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { applyAt, eventually, getObject, kubeFor, kubeFromConfig, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import { releaseBindings } from '../support/bind-cleanup';
import { startOidcProvider, type AccessTokenFault, type OidcTestClient } from '../../harness/login/oidc';

type O = WireObject;
const BIND = '/apis/klutch.anynines.com/v1alpha1';
const id = randomBytes(3).toString('hex');
/** This suite's own API, so no other suite's CRD in b or rule on a is touched. */
const group = `mb${id}.klutch-kit.test`;
const WIDGETS = { resource: 'widgets', group } as const;
const GADGETS = { resource: 'gadgets', group } as const;
const W = `${WIDGETS.resource}.${group}`;
const G = `${GADGETS.resource}.${group}`;
/** What the backend names in /export (--machine-bind-resource) and the provider maps to the backend's client ID. */
const RESOURCE = `https://bind-${id}.klutch-kit.test/`;
/** Another resource server: tokens for it have another audience. */
const OTHER_RESOURCE = `https://other-${id}.klutch-kit.test/`;
const secret = () => randomBytes(24).toString('base64url');
const machine = (clientId: string, m: OidcTestClient['machine'] = {}): OidcTestClient => ({
  clientId,
  clientSecret: secret(),
  redirectUris: [],
  machine: m,
});
const ci = machine(`ci-${id}`);
/** A person whose `sub` is the CI client's (its client id, as the provider makes a client's `sub`). */
const namesake = { sub: ci.clientId };
/** Not named by widgets' rule. */
const intruder = machine(`intruder-${id}`);
/** Named by no client entry, but in the group widgets' rule names. */
const deployer = machine(`deployer-${id}`, { groups: [`platform-${id}`] });
const faulty = Object.fromEntries(
  (['signature', 'issuer', 'expired', 'type'] as AccessTokenFault[]).map((f) => [f, machine(`faulty-${f}-${id}`, { accessTokenFault: f })]),
) as Record<AccessTokenFault, OidcTestClient>;

const ns = `kbm-${id}`; // the konnector's namespace in b
const app = `kbma-${id}`; // where the app's claims live

let s: BackendSuite;
let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let konnector: KonnectorProcess | undefined;
let logDir: string;
let secretFile: string;
let runs = 0;

const url = () => `${s.backend.url}/export`;
const cli = (args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
  startCli([...args, '-n', ns], {
    kubeconfig: b.kubeconfig,
    closeStdin: true,
    // The plugin trusts the test provider's CA as a CI job trusts a private CA.
    env: { NODE_EXTRA_CA_CERTS: s.idp.caFile, ...env },
  });
const exited = async (run: CliRun, code: number) => {
  const r = await run.done;
  writeFileSync(join(logDir, `kubectl-bind-${++runs}.log`), `${run.child.spawnargs.join(' ')}\nexit ${r.code}\n${r.stderr}\n${r.stdout}`);
  if (r.code !== code) throw new Error(`kubectl bind exited ${r.code ?? r.signal}, not ${code}:\n${r.stderr}\n${r.stdout}`);
  return r;
};

/** An access token from the provider's token endpoint, as any client-credentials client gets one. */
async function token(client: OidcTestClient, resource = RESOURCE, issuer = s.idp): Promise<string> {
  const res = await undiciFetch(`${issuer.issuer}/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource }).toString(),
    dispatcher: new Agent({ connect: { ca: issuer.ca } }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token for ${client.clientId}: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

async function backend(path: string, bearer: string): Promise<{ status: number; body: Record<string, unknown>; challenge: string | null }> {
  const res = await fetch(`${s.backend.url}${path}`, { headers: { Authorization: `Bearer ${bearer}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, challenge: res.headers.get('www-authenticate') };
}

async function metric(line: RegExp): Promise<number> {
  const text = await (await fetch(`${s.backend.probeUrl}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? 0 : Number(m.split(' ').at(-1));
}

/** The consumer namespaces this suite's backend made for machine client `sub` (a person of that sub: `person`). */
async function namespacesOf(sub: string, o: { person?: boolean; cid?: string } = {}): Promise<string[]> {
  const list = await ka.core.listNamespace();
  const identity = `${o.person ? '' : 'system:client:'}${sub}#${o.cid ?? ''}`;
  return list.items
    .filter((n) => n.metadata!.name!.startsWith(`${s.prefix}-`) && !n.metadata!.deletionTimestamp)
    .filter((n) =>
      (o.cid ? (a?: string) => a === identity : (a?: string) => a?.startsWith(identity))(n.metadata!.annotations?.[Annotations.identity]),
    )
    .map((n) => n.metadata!.name!);
}

function crd(plural: string, kind: string): O {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
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
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

async function offer(plural: string, kind: string, annotations: Record<string, string>): Promise<void> {
  await applyAt(ka, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${group}`, crd(plural, kind));
  await waitEstablished(ka, [`${plural}.${group}`]);
  await applyAt(
    ka,
    `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${s.templateNamespace}/apiserviceexporttemplates/${plural}`,
    {
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportTemplate',
      metadata: { name: plural, namespace: s.templateNamespace, annotations },
      spec: { APIServiceSelector: { group, resource: plural } },
    },
  );
}

beforeAll(async () => {
  [a, b] = await Promise.all([cluster('a'), cluster('b')]);
  ka = kubeFor(a);
  kb = kubeFor(b);
  logDir = join((await controlPlanes()).runDir, 'bind-machine', id);
  mkdirSync(logDir, { recursive: true });
  s = await startBackendSuite(a, {
    users: 1,
    extraUsers: [namesake],
    args: ['--machine-bind', `--machine-bind-resource=${RESOURCE}`],
    extraClients: [ci, intruder, deployer, ...Object.values(faulty)],
    resourceServers: [
      { resource: RESOURCE, audience: 'klutch-bind' },
      { resource: OTHER_RESOURCE, audience: `another-api-${id}` },
    ],
  });
  // Widgets: the CI client by name, or a machine in group platform. Gadgets: no rule (the default, allow-all).
  await offer('widgets', 'Widget', {
    'klutch-kit.anynines.com/bind-allowed-clients': ci.clientId,
    'klutch-kit.anynines.com/bind-allowed-groups': `platform-${id}`,
  });
  await offer('gadgets', 'Gadget', {});
  await requireOk(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: app } });
  secretFile = join(logDir, 'ci-client-secret');
  writeFileSync(secretFile, `${ci.clientSecret}\n`, { mode: 0o600 });
}, 120_000);

afterAll(async () => {
  // Unbind while the konnector runs: it deletes the claims here and upstream, then the CRD, then the binding.
  if (kb) await releaseBindings(kb, ns, [W, G], konnector ? 30_000 : 0);
  await konnector?.proc.stop();
  await s?.stop();
  for (const name of [W, G]) await ka?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${app}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
  for (const kind of ['clusterroles', 'clusterrolebindings'])
    for (const name of [`${ns}-konnector`, `${ns}-konnector-${W}`, `${ns}-konnector-${G}`])
      await kb?.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${name}`);
}, 120_000);

describe('kubectl bind --client-id (a CI pipeline)', () => {
  it('binds without a browser: token, consumer, kubeconfig Secret, konnector, binding Ready, a claim up and its status down; the secret never on argv', async () => {
    const run = await cli([
      url(),
      '--client-id',
      ci.clientId,
      '--client-secret-file',
      secretFile,
      '--oidc-issuer',
      s.idp.issuer,
      '--api',
      W,
      '--accept-permission-claims',
      '--wait=30s',
    ]);
    // What every user of the machine sees of the plugin process: its command line, never the secret.
    await run.printed(`Provider `);
    const cmdline = readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain(`--client-secret-file\0${secretFile}`);
    expect(cmdline).not.toContain(ci.clientSecret);
    expect(readFileSync(`/proc/${run.child.pid}/environ`, 'utf8')).not.toContain(ci.clientSecret);
    await run.printed(`Konnector installed in namespace ${ns}`);
    konnector = await startKonnector({
      kubeconfig: await konnectorKubeconfig(b, ns),
      namespace: ns,
      logDir,
      args: ['--heartbeat-interval=2s'],
    });
    const r = await exited(run, 0);
    expect(r.stderr).toContain(`Asking ${s.idp.issuer} for a token of ${RESOURCE} as client ${ci.clientId}.`);
    expect(r.stderr).toContain(`Authenticated as client ${ci.clientId} (${s.idp.issuer}/${ci.clientId})`);
    expect(r.stdout).toMatch(
      new RegExp(`^${W.replaceAll('.', '\\.')}\\s+Widget \\(${group.replaceAll('.', '\\.')}/v1\\)\\s+\\S.*\\s+True\\s+-$`, 'm'),
    );
    expect(`${r.stdout}${r.stderr}`).not.toContain(ci.clientSecret);

    // The consumer on the provider: the identity is the client (its sub) on this cluster; the binder is recorded
    // with its client ID, for the export-request path's rule.
    const [consumerNs, ...more] = await namespacesOf(ci.clientId);
    expect(more).toEqual([]);
    const cb = await eventually('a heartbeat of the konnector', async () => {
      const o = await getObject(ka, `${BIND}/namespaces/${consumerNs}/clusterbindings/cluster`);
      return o?.status?.konnectorVersion ? o : undefined;
    });
    expect(JSON.parse(cb.metadata.annotations['klutch-kit.anynines.com/bound-by'])).toMatchObject({
      iss: s.idp.issuer,
      sub: ci.clientId,
      cid: ci.clientId,
    });
    const secrets = ((await requireOk(kb, 'GET', `/api/v1/namespaces/${ns}/secrets`)).items as O[]).filter((x) =>
      x.metadata.name.startsWith('kubeconfig-'),
    );
    expect(secrets).toHaveLength(1);
    const binding = await requireOk(kb, 'GET', `${BIND}/namespaces/${ns}/apiservicebindings/${W}`);
    expect(binding.spec.kubeconfigSecretRef).toEqual({ name: secrets[0]!.metadata.name, namespace: ns, key: 'kubeconfig' });

    // A claim in b goes up to the provider, its status comes back.
    const path = (namespace: string, name = '') => `/apis/${group}/v1/namespaces/${namespace}/widgets${name ? `/${name}` : ''}`;
    await requireOk(kb, 'POST', path(app), {
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1', namespace: app },
      spec: { size: 3 },
    });
    const pns = await eventually(
      'the provider namespace of the app namespace',
      async () =>
        (await getObject(ka, `${BIND}/namespaces/${consumerNs}/apiservicenamespaces/${app}`))?.status?.namespace as string | undefined,
    );
    const up = await eventually('the claim upstream', () => getObject(ka, path(pns, 'w1')));
    expect(up.spec).toEqual({ size: 3 });
    await requireOk(ka, 'PATCH', `${path(pns, 'w1')}/status`, { status: { phase: 'Ready' } }, 'application/merge-patch+json');
    await eventually('the status in the app cluster', async () =>
      (await getObject(kb, path(app, 'w1')))?.status?.phase === 'Ready' ? true : undefined,
    );
  });

  it('makes the same consumer objects a browser bind makes, and binding again (secret from the environment, APIs from a request file) reuses them', async () => {
    // A person's browser bind of the same API, for comparison.
    const user = s.user();
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, ...GADGETS });
    const [machineNs] = await namespacesOf(ci.clientId);
    const shape = async (namespace: string) => ({
      clusterBindings: ((await requireOk(ka, 'GET', `${BIND}/namespaces/${namespace}/clusterbindings`)).items as O[]).map(
        (x) => x.metadata.name,
      ),
      serviceAccounts: ((await requireOk(ka, 'GET', `/api/v1/namespaces/${namespace}/serviceaccounts`)).items as O[])
        .map((x) => x.metadata.name)
        .filter((n) => n !== 'default'),
      roleBindings: (
        (await requireOk(ka, 'GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`)).items as O[]
      ).map((x) => `${x.metadata.name}→${x.roleRef.name}`),
      secrets: ((await requireOk(ka, 'GET', `/api/v1/namespaces/${namespace}/secrets`)).items as O[]).map((x) => x.metadata.name),
    });
    expect(await shape(machineNs!)).toEqual(await shape(flow.namespace));
    expect((await shape(machineNs!)).secrets).toEqual(['kubeconfig']);

    // Again, as a GitOps job would: the secret in a variable, the API from a committed request file.
    const file = join(logDir, 'gadgets-request.yaml');
    writeFileSync(
      file,
      `apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nmetadata:\n  name: ${G}\nspec:\n  resources:\n  - group: ${group}\n    resource: gadgets\n`,
    );
    const run = await cli(
      [
        url(),
        '--client-id',
        ci.clientId,
        '--client-secret-env',
        'CI_CLIENT_SECRET',
        '--oidc-issuer',
        s.idp.issuer,
        '-f',
        file,
        '--accept-permission-claims',
        '--wait=30s',
      ],
      { CI_CLIENT_SECRET: ci.clientSecret },
    );
    await run.printed(`Provider `);
    expect(readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8')).toContain('--client-secret-env\0CI_CLIENT_SECRET');
    expect(readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8')).not.toContain(ci.clientSecret);
    const r = await exited(run, 0);
    expect(r.stderr).toMatch(/Updated the provider kubeconfig in Secret/);
    expect(r.stdout).toMatch(new RegExp(`^${G.replaceAll('.', '\\.')}\\s+Gadget .*True`, 'm'));
    expect(await namespacesOf(ci.clientId)).toEqual([machineNs]);
  });

  it('without --api or -f, lists what the client may bind and exits 2', async () => {
    // Unpinned, the secret goes nowhere: the plugin names the provider to pin and exits 2 before any request to it.
    const unpinned = await exited(await cli([url(), '--client-id', ci.clientId, '--client-secret-file', secretFile]), 2);
    expect(unpinned.stderr).toContain('the client secret goes to a provider only where you name it, and it was not sent');
    expect(unpinned.stderr).toContain(`if that is your provider, run again with --oidc-issuer ${s.idp.issuer}`);
    const r = await exited(
      await cli([url(), '--client-id', ci.clientId, '--client-secret-file', secretFile, '--oidc-issuer', s.idp.issuer]),
      2,
    );
    expect(r.stderr).toMatch(
      new RegExp(
        `error: name the APIs to bind: --api <resource>\\.<group> or -f <request\\.yaml>; client ${ci.clientId} may bind .*${W.replaceAll('.', '\\.')}`,
      ),
    );
    expect(r.stderr).toContain(G);
  });

  it('refuses a literal --client-secret, saying why, before anything runs', async () => {
    const r = await exited(await cli([url(), '--client-id', ci.clientId, '--client-secret', 'hunter2-literal']), 2);
    expect(r.stderr).toContain('--client-secret is refused: a secret on the command line is readable by every user of this machine');
    expect(r.stderr).toContain('--client-secret-file FILE or --client-secret-env VARIABLE');
    expect(r.stderr).not.toContain('hunter2-literal');
  });
});

describe('the backend checks machine tokens as strictly as ID tokens', () => {
  it('refuses another audience, expiry, another issuer, no signature, a forged signature and an ID token’s type; nothing is created', async () => {
    const good = await token(ci);
    const claims = decodeJwt(good);
    expect(claims).toMatchObject({ iss: s.idp.issuer, aud: 'klutch-bind', client_id: ci.clientId, sub: ci.clientId });
    // A second real provider, another issuer: its keys are not ours, whatever its tokens say.
    const other = await startOidcProvider({
      clients: [ci],
      users: [{ sub: `nobody-${id}` }],
      resourceServers: [{ resource: RESOURCE, audience: 'klutch-bind' }],
    });
    const cases: { name: string; token: string; reason: string; message: RegExp }[] = [];
    try {
      cases.push(
        {
          name: 'another audience',
          token: await token(ci, OTHER_RESOURCE),
          reason: 'access-token-audience',
          message: /audience does not contain "klutch-bind"/,
        },
        { name: 'expired', token: await token(faulty.expired), reason: 'access-token-expired', message: /expired/ },
        {
          name: 'another issuer (re-signed by ours)',
          token: await token(faulty.issuer),
          reason: 'access-token-issuer',
          message: /another issuer/,
        },
        {
          name: 'another issuer (a second provider)',
          token: await token(ci, RESOURCE, other),
          reason: 'access-token-signature',
          message: /signature/,
        },
        {
          name: 'unsigned (alg none)',
          token: new UnsecuredJWT(claims).encode().replace(/^[^.]+/, Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')),
          reason: 'access-token-signature',
          message: /signature/,
        },
        { name: 'forged (a foreign key)', token: await token(faulty.signature), reason: 'access-token-signature', message: /signature/ },
        { name: 'typ JWT (an ID token’s)', token: await token(faulty.type), reason: 'access-token-type', message: /at\+jwt/ },
      );
    } finally {
      await other.stop();
    }
    for (const c of cases) {
      const before = await metric(new RegExp(`^klutch_backend_authentication_failures_total\\{reason="${c.reason}"\\}`));
      for (const path of ['/resources', `/bind?s=abc123&c=mb${id}&resource=gadgets&group=${group}`]) {
        const res = await backend(path, c.token);
        expect(res.status, `${c.name} ${path}`).toBe(401);
        expect(res.body, c.name).toMatchObject({ reason: c.reason, message: expect.stringMatching(c.message) });
        expect(res.challenge).toMatch(/^Bearer error="invalid_token"/);
      }
      expect(await metric(new RegExp(`^klutch_backend_authentication_failures_total\\{reason="${c.reason}"\\}`)), c.name).toBe(before + 2);
    }
    for (const f of Object.values(faulty)) expect(await namespacesOf(f.clientId), f.clientId).toEqual([]);
    // The good token of the same client is taken (the refusals were the faults, not the client).
    expect((await backend('/resources', good)).status).toBe(200);
  });

  it('lists on /resources only what each machine may bind', async () => {
    const list = async (c: OidcTestClient) => (await backend('/resources', await token(c))).body;
    expect(await list(ci)).toEqual({
      items: expect.arrayContaining([
        { group, resource: 'widgets', kind: 'Widget' },
        { group, resource: 'gadgets', kind: 'Gadget' },
      ]),
      hidden: 0,
    });
    // By its group, not its name.
    expect(((await list(deployer)).items as O[]).map((x) => x.resource)).toContain('widgets');
    const theirs = await list(intruder);
    expect((theirs.items as O[]).map((x) => x.resource)).not.toContain('widgets');
    expect((theirs.items as O[]).map((x) => x.resource)).toContain('gadgets');
    expect(theirs.hidden).toBe(1);
  });

  it('refuses a client the template’s rule does not name: 403 naming the API and the client, counted, audited, nothing created', async () => {
    const refusals = () =>
      metric(new RegExp(`^klutch_backend_bind_refusals_total\\{api="${W.replaceAll('.', '\\.')}",reason="not-allowed"\\}`));
    const before = await refusals();
    const file = join(logDir, 'intruder-secret');
    writeFileSync(file, intruder.clientSecret, { mode: 0o600 });
    const r = await exited(
      await cli([url(), '--client-id', intruder.clientId, '--client-secret-file', file, '--oidc-issuer', s.idp.issuer, '--api', W]),
      1,
    );
    expect(r.stderr).toContain(
      `error: the bind backend refused to bind ${W} for client ${intruder.clientId}: client ${intruder.clientId}: only`,
    );
    expect(r.stderr).toContain(`client "${ci.clientId}" may bind ${W}`);
    expect(r.stderr).toContain('bind-allowed-clients');
    expect(await refusals()).toBe(before + 1);
    expect(await namespacesOf(intruder.clientId)).toEqual([]);
    const audit = readFileSync(s.backend.proc.logPath, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"bind-refused"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.clientId === intruder.clientId);
    expect(audit).toMatchObject({ audit: true, path: 'machine', api: W, reason: 'not-allowed', subject: intruder.clientId });
  });
});

describe('issue 34, item 10: people and machines never share a consumer', () => {
  /** A machine bind of gadgets from cluster `cid` with the CI client's token: the consumer namespace. */
  const machineBind = async (cid: string) => {
    const bound = await backend(`/bind?s=abc123&c=${cid}&resource=gadgets&group=${group}`, await token(ci));
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    return (parse(Buffer.from(bound.body.kubeconfig as string, 'base64').toString()) as { contexts: { context: { namespace: string } }[] })
      .contexts[0]!.context.namespace;
  };

  it("attack: a person whose sub is a machine client's, binding from the client's cluster, gets a consumer of its own", async () => {
    const cid = `mbp${id}`;
    const machineNs = await machineBind(cid);
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: namesake.sub, cid, ...GADGETS });
    expect(flow.namespace, "the person's consumer is not the client's").not.toBe(machineNs);
    expect(await namespacesOf(ci.clientId, { cid })).toEqual([machineNs]);
    expect(await namespacesOf(ci.clientId, { cid, person: true })).toEqual([flow.namespace]);
    // The client's ClusterBinding still records the client, not the person.
    const cb = await getObject(ka, `${BIND}/namespaces/${machineNs}/clusterbindings/cluster`);
    expect(JSON.parse(cb!.metadata.annotations['klutch-kit.anynines.com/bound-by'])).toMatchObject({ cid: ci.clientId });
  });

  it('a consumer a machine bound before identities were qualified stays its own: a namesake person is refused, the client binding again keeps it', async () => {
    const cid = `mbl${id}`;
    const ns = await machineBind(cid);
    // As the backend before this change keyed it: `<sub>#<cid>`, the person's key.
    const legacy = `${ci.clientId}#${cid}`;
    await requireOk(
      ka,
      'PATCH',
      `/api/v1/namespaces/${ns}`,
      {
        metadata: {
          annotations: { [Annotations.identity]: legacy },
          labels: { [Labels.identityHash]: identityHash(legacy), [Labels.subjectHash]: identityHash(ci.clientId) },
        },
      },
      'application/merge-patch+json',
    );
    const { browser, sid } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user: namesake.sub, cid });
    // The backend's cache sees the old key within moments; until then the person would get a consumer of its own.
    const refused = await eventually('the namesake refused', async () => {
      const page = await browser.get(`${s.backend.url}/bind?s=${sid}&resource=gadgets&group=${encodeURIComponent(group)}`);
      return page.status === 403 ? page : undefined;
    });
    expect(refused.body).toContain(`is also the subject of machine client ${ci.clientId}`);
    expect(await namespacesOf(ci.clientId, { cid, person: true })).toEqual([ns]);
    // The client binds again: the same namespace, now under the machine's key (once the cache has the old key).
    await eventually("the client's namespace under the machine's key", async () =>
      (await machineBind(cid)) === ns && (await namespacesOf(ci.clientId, { cid })).join() === ns ? true : undefined,
    );
  });
});

/** A loopback server that plays a whole OpenID provider and resource server for an attacker: it keeps what it is sent. */
async function collector(): Promise<{ url: string; caught: string[]; close: () => Promise<void> }> {
  const caught: string[] = [];
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    caught.push(`${req.method} ${req.url} authorization=${req.headers.authorization ?? ''}`);
    if (req.url === '/.well-known/openid-configuration')
      return res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ issuer: base, token_endpoint: `${base}/token` }));
    if (req.url === '/token')
      return res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: 'x', token_type: 'Bearer' }));
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, caught, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A backend at a URL the user typed that serves our backend's /export with its machine method changed by `change`. */
async function hostileBackend(
  change: (m: Record<string, string>) => Record<string, string>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const doc = (await (await fetch(url())).json()) as {
    authenticationMethods: { method: string; oauth2ClientCredentials?: Record<string, string> }[];
  };
  for (const m of doc.authenticationMethods)
    if (m.method === 'OAuth2ClientCredentials') m.oauth2ClientCredentials = change(m.oauth2ClientCredentials!);
  const server = http.createServer((_, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(doc)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/export`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('issue 34, item 10: a machine bind sends its secrets only where the user said', () => {
  it('attack: an /export document naming a provider of its own gets no request, so never the client secret', async () => {
    const thief = await collector();
    const hostile = await hostileBackend((m) => ({ ...m, issuerURL: thief.url }));
    try {
      const r = await (await cli([hostile.url, '--client-id', ci.clientId, '--client-secret-file', secretFile, '--api', W])).done;
      // What the attacker received first: without the check, a token request with the client secret.
      expect(thief.caught, 'requests the named provider received').toEqual([]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`names the OpenID provider ${thief.url}; the client secret goes to a provider only where you name it`);
    } finally {
      await hostile.close();
      await thief.close();
    }
  });

  it("attack: an /export document naming another host's bind URLs gets no request, so never the access token", async () => {
    const thief = await collector();
    const hostile = await hostileBackend((m) => ({ ...m, resourcesURL: `${thief.url}/resources`, bindURL: `${thief.url}/bind` }));
    try {
      const r = await (
        await cli([hostile.url, '--client-id', ci.clientId, '--client-secret-file', secretFile, '--oidc-issuer', s.idp.issuer, '--api', W])
      ).done;
      // What the attacker received first: without the check, a request to its /resources or /bind with the access token.
      expect(thief.caught, 'requests the other host received').toEqual([]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        /names (resourcesURL|bindURL) http:\/\/127\.0\.0\.1:\d+\/\w+ on another host; the access token goes only to http:\/\/127\.0\.0\.1/,
      );
    } finally {
      await hostile.close();
      await thief.close();
    }
  });
});

describe("a machine's kubeconfig", () => {
  it('cannot take an API its client may not bind by creating the export request itself', async () => {
    // The intruder may bind gadgets (no rule) and gets a kubeconfig for that; widgets' rule does not name it.
    const bound = await backend(`/bind?s=abc123&c=mbx${id}&resource=gadgets&group=${group}`, await token(intruder));
    expect(bound.status).toBe(200);
    const kubeconfig = Buffer.from(bound.body.kubeconfig as string, 'base64').toString();
    const namespace = (parse(kubeconfig) as { contexts: { context: { namespace: string } }[] }).contexts[0]!.context.namespace;
    expect(
      JSON.parse(
        (await getObject(ka, `${BIND}/namespaces/${namespace}/clusterbindings/cluster`))!.metadata.annotations[
          'klutch-kit.anynines.com/bound-by'
        ],
      ),
    ).toMatchObject({ cid: intruder.clientId });
    const consumer = kubeFromConfig(kubeconfig);
    await requireOk(consumer, 'POST', `${BIND}/namespaces/${namespace}/apiserviceexportrequests`, {
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportRequest',
      metadata: { name: W },
      spec: { resources: [{ group, resource: 'widgets' }] },
    });
    const failed = await eventually('the widgets request to fail', async () => {
      const r = await getObject(consumer, `${BIND}/namespaces/${namespace}/apiserviceexportrequests/${W}`);
      return r?.status?.phase === 'Failed' ? r : undefined;
    });
    expect(failed.status.conditions).toContainEqual(
      expect.objectContaining({
        type: 'ExportsReady',
        status: 'False',
        reason: 'Forbidden',
        message: expect.stringContaining(`client "${ci.clientId}"`),
      }),
    );
    expect(await getObject(ka, `${BIND}/namespaces/${namespace}/apiserviceexports/${W}`)).toBeUndefined();
    const audit = readFileSync(s.backend.proc.logPath, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"bind-refused"') && l.includes('"path":"export-request"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.clientId === intruder.clientId);
    expect(audit).toMatchObject({ audit: true, api: W, reason: 'not-allowed', namespace });
  });
});
