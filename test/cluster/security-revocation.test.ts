/**
 * Attacks on revocation (provider cluster `a`, issue 34 item 8): credentials a consumer should lose, and keeps. Each
 * test fails without its fix: a consumer's token reading every Secret of its cluster namespace (the never-expiring
 * legacy token of a consumer adopted from Klutch among them); a heartbeat dated in the future keeping a consumer from
 * ever counting as abandoned; an abandoned adopted consumer keeping its legacy token; and a legacy token kept past
 * `--legacy-token-max-age` because the konnector never heartbeats on its rotated token.
 *
 * The adopted consumers are made as Klutch's backend makes them (test/cluster/klutch-migration.test.ts does the same
 * with a live sync) before the backends start, whose first sweep adopts them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendAnnotations } from '../../backend/labels';
import {
  Annotations,
  BIND_API_VERSION,
  CLUSTER_BINDING_NAME,
  KUBECONFIG_SECRET_KEY,
  Kinds,
  providerKubeconfigYaml,
} from '../../exports/bind-api';
import { PG, startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { installBindCrds } from '../../harness/parts/bind-backend';
import { bindFlow, type FlowResult } from '../../harness/parts/bind-flow';
import { eventually, getObject, kubeFor, kubeFromConfig, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { cluster } from '../support/cluster';

const BIND = '/apis/klutch.anynines.com/v1alpha1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const SA = 'klutch-binder';
const ABANDONED_S = 20;
const MAX_AGE_S = 15;
const id = randomBytes(3).toString('hex');
/** `--abandoned-consumer-after` short, `--legacy-token-max-age` out of reach. */
const ABANDONING = `rva${id}`;
/** `--legacy-token-max-age` short, no consumer abandoned. */
const AGING = `rvm${id}`;

let a: ClusterInfo;
let kube: Kube;
let abandoning: BackendSuite;
let aging: BackendSuite;
/** Made by "Klutch's backend" under each prefix; its konnector never heartbeats. */
let abandonedKlutch: KlutchConsumer;
let agingKlutch: KlutchConsumer;
/** Bound on the abandoning backend. */
let reader: FlowResult;
let futureDated: FlowResult;

interface KlutchConsumer {
  readonly namespace: string;
  /** The legacy ServiceAccount token, which never expires. */
  readonly token: string;
}

const secretPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;

/** What Klutch's backend leaves for a consumer: namespace, legacy token Secret, RBAC, ClusterBinding, kubeconfig. */
async function klutchConsumer(prefix: string): Promise<KlutchConsumer> {
  const ns = await requireOk(kube, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { generateName: `${prefix}-`, annotations: { [Annotations.identity]: `klutch-user-${id}#${prefix}` } },
  });
  const namespace = ns.metadata.name as string;
  await requireOk(kube, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name: SA } });
  await requireOk(kube, 'POST', secretPath(namespace), legacyTokenSecret());
  const token = await legacyToken(namespace);
  await requireOk(kube, 'POST', `${RBAC}/namespaces/${namespace}/rolebindings`, {
    metadata: { name: SA },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: SA },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace }],
  });
  await requireOk(kube, 'POST', `${BIND}/namespaces/${namespace}/clusterbindings`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.ClusterBinding,
    metadata: { name: CLUSTER_BINDING_NAME },
    spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: KUBECONFIG_SECRET_KEY }, providerPrettyName: 'Klutch' },
  });
  const kubeconfig = providerKubeconfigYaml({ server: a.server, ca: a.ca }, namespace, token);
  await requireOk(kube, 'POST', secretPath(namespace), {
    metadata: { name: 'kubeconfig' },
    data: { [KUBECONFIG_SECRET_KEY]: Buffer.from(kubeconfig).toString('base64') },
  });
  return { namespace, token };
}

const legacyTokenSecret = () => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'kubernetes.io/service-account-token',
  metadata: { name: SA, annotations: { 'kubernetes.io/service-account.name': SA } },
});

/** The token Kubernetes fills into the legacy token Secret of a namespace. */
function legacyToken(namespace: string): Promise<string> {
  return eventually('the legacy token filled in', async () => {
    const s = await getObject(kube, secretPath(namespace, SA));
    return s?.data?.token ? Buffer.from(s.data.token as string, 'base64').toString() : undefined;
  });
}

/** The token's answer on the provider: 401 once it is revoked. */
async function tokenAnswer(token: string): Promise<number> {
  const k = kubeFromConfig(providerKubeconfigYaml({ server: a.server, ca: a.ca }, 'default', token));
  return (await k.request('GET', '/api')).code;
}

/** Waits until the legacy token Secret of `c` is gone and its token refused. */
async function legacyTokenRevoked(c: KlutchConsumer, timeoutMs: number): Promise<void> {
  await eventually(
    `the legacy token Secret of ${c.namespace} deleted`,
    async () => ((await getObject(kube, secretPath(c.namespace, SA))) ? undefined : true),
    timeoutMs,
  );
  await eventually('the legacy token refused', async () => ((await tokenAnswer(c.token)) === 401 ? true : undefined), 15_000);
}

beforeAll(async () => {
  a = await cluster('a');
  kube = kubeFor(a);
  await installBindCrds(kube);
  [abandonedKlutch, agingKlutch] = await Promise.all([klutchConsumer(ABANDONING), klutchConsumer(AGING)]);
  [abandoning, aging] = await Promise.all([
    startBackendSuite(a, {
      users: 2,
      args: [`--namespace-prefix=${ABANDONING}`, `--abandoned-consumer-after=${ABANDONED_S}s`, '--legacy-token-max-age=1h'],
    }),
    // The grace can never pass: the konnector never heartbeats.
    startBackendSuite(a, {
      users: 1,
      args: [`--namespace-prefix=${AGING}`, `--legacy-token-grace=${MAX_AGE_S}s`, `--legacy-token-max-age=${MAX_AGE_S}s`],
    }),
  ]);
  const bind = (s: BackendSuite) => bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
  [reader, futureDated] = await Promise.all([bind(abandoning), bind(abandoning)]);
}, 180_000);

afterAll(async () => {
  await Promise.all([abandoning?.stop(), aging?.stop()]);
  const list = await kube?.core.listNamespace();
  for (const n of list?.items.map((x) => x.metadata!.name!) ?? [])
    if (n.startsWith(`${ABANDONING}-`) || n.startsWith(`${AGING}-`)) await kube.request('DELETE', `/api/v1/namespaces/${n}`);
});

describe("a consumer's token reads no credential but its own kubeconfig", () => {
  it('gets the kubeconfig Secret by name; not the never-expiring legacy token beside it, nor the list', async () => {
    const ns = reader.namespace;
    // As in a consumer adopted from Klutch: the legacy token Secret of the same ServiceAccount.
    await requireOk(kube, 'POST', secretPath(ns), legacyTokenSecret());
    await legacyToken(ns);
    const consumer = kubeFromConfig(reader.kubeconfig);
    expect((await consumer.request('GET', secretPath(ns, 'kubeconfig'))).code).toBe(200);
    const legacy = await consumer.request('GET', secretPath(ns, SA));
    expect(legacy.code, 'an expiring token reads the token that never expires').toBe(403);
    expect((await consumer.request('GET', secretPath(ns))).code, 'the list of Secrets (with their data)').toBe(403);
    expect((await consumer.request('GET', `${secretPath(ns)}?watch=true&timeoutSeconds=1`)).code, 'a watch').toBe(403);
  });
});

describe('abandoned consumers lose every credential', () => {
  it('a heartbeat dated in the future counts as sent when the backend saw it: the consumer is still abandoned', async () => {
    const ns = futureDated.namespace;
    const consumer = kubeFromConfig(futureDated.kubeconfig);
    await requireOk(
      consumer,
      'PATCH',
      `${BIND}/namespaces/${ns}/clusterbindings/${CLUSTER_BINDING_NAME}/status`,
      { status: { lastHeartbeatTime: '2999-01-01T00:00:00Z', heartbeatInterval: '5m0s' } },
      'application/merge-patch+json',
    );
    const cb = await eventually(
      'CredentialsRevoked',
      async () => {
        const b = await getObject(kube, `${BIND}/namespaces/${ns}/clusterbindings/${CLUSTER_BINDING_NAME}`);
        const c = ((b?.status?.conditions ?? []) as { type: string; status: string }[]).find((x) => x.type === 'CredentialsRevoked');
        return c?.status === 'True' ? b : undefined;
      },
      (ABANDONED_S + 40) * 1000,
    );
    expect((cb as WireObject).metadata.annotations?.[BackendAnnotations.futureHeartbeat]).toMatch(/^2999-01-01T00:00:00Z \d{4}-/);
    expect((await kube.request('GET', secretPath(ns, 'kubeconfig'))).code).toBe(404);
    await eventually('the token refused', async () => ((await consumer.request('GET', '/api')).code === 401 ? true : undefined), 15_000);
  }, 90_000);

  it("an abandoned consumer adopted from Klutch's backend loses its never-expiring legacy token too", async () => {
    const ns = abandonedKlutch.namespace;
    const adopted = await getObject(kube, `/api/v1/namespaces/${ns}`);
    expect(adopted?.metadata.annotations?.[BackendAnnotations.adopted], 'adopted by the sweep').toBeDefined();
    await legacyTokenRevoked(abandonedKlutch, (ABANDONED_S + 40) * 1000);
    expect((await kube.request('GET', secretPath(ns, 'kubeconfig'))).code).toBe(404);
  }, 90_000);
});

describe('--legacy-token-max-age', () => {
  it("deletes an adopted consumer's legacy token that long after the adoption, though its konnector never moved on", async () => {
    const ns = agingKlutch.namespace;
    const adopted = await eventually('the adoption', async () => {
      const n = await getObject(kube, `/api/v1/namespaces/${ns}`);
      return n?.metadata.annotations?.[BackendAnnotations.adopted] as string | undefined;
    });
    await legacyTokenRevoked(agingKlutch, (MAX_AGE_S + 45) * 1000);
    expect(Date.now() - Date.parse(adopted)).toBeGreaterThanOrEqual(MAX_AGE_S * 1000);
    // Not abandoned: only the legacy token went; the kubeconfig Secret (with the rotated token) stays.
    expect((await kube.request('GET', secretPath(ns, 'kubeconfig'))).code).toBe(200);
  }, 90_000);
});
