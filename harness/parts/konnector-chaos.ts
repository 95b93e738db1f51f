/**
 * The chaos workload and its invariants, shared by the chaos suite (small) and bench/konnector (full scale).
 *
 * The workload creates, changes and deletes PostgresqlInstance claims in a few app namespaces, retrying each call
 * until the API server takes it (it may be restarting). The invariants are what must hold once the konnector has
 * caught up: every claim has exactly one upstream twin, in its mapped namespace, with the same spec; no claim waits
 * behind a finalizer; no upstream copy is left without its claim.
 */
import { Annotations, MERGE_PATCH } from '../../exports/bind-api';
import { kubeClients } from '../../konnector/kube/client';
import { messageOf, statusOf } from '../../lib/kube-errors';
import { jsonSubset } from '../../konnector/kube/objects';
import type { Kube } from '../cluster/kube';
import { sleep } from '../../lib/abort';

export interface ChaosWorld {
  readonly consumer: Kube;
  readonly provider: Kube;
  readonly clusterNamespace: string;
  readonly namespaces: readonly string[];
}

type O = {
  metadata: { name: string; namespace: string; deletionTimestamp?: string; annotations?: Record<string, string> };
  spec?: unknown;
};
const PG = '/apis/anynines.com/v1';

async function retry(what: string, f: () => Promise<{ code: number; body: Record<string, unknown> }>, ok: number[] = []): Promise<void> {
  for (let i = 0; ; i++) {
    const r = await f().catch((e: Error) => ({ code: 0, body: { message: e.message } }));
    if ((r.code >= 200 && r.code < 300) || ok.includes(r.code)) return;
    if (i > 600) throw new Error(`${what}: ${r.code} ${JSON.stringify(r.body.message)}`);
    await sleep(100);
  }
}

/** One call as `{ code, body }`, over keep-alive connections (a new TLS handshake per call would make the client the bottleneck). */
function caller(kube: Kube) {
  const c = kubeClients(kube.config, { maxSockets: 64 });
  return async (f: (c: ReturnType<typeof kubeClients>) => Promise<unknown>) => {
    try {
      await f(c);
      return { code: 200, body: {} };
    } catch (e) {
      return { code: statusOf(e) ?? 0, body: { message: messageOf(e) } };
    }
  };
}

export function chaosWorkload(w: ChaosWorld, o: { concurrency?: number } = {}) {
  const call = caller(w.consumer);
  const pgApi = { group: 'anynines.com', version: 'v1', plural: 'postgresqlinstances' };
  const ns = (i: number) => w.namespaces[i % w.namespaces.length]!;
  const name = (i: number) => `c-${i}`;
  const spec = (i: number, maxConnections = 100) => ({
    service: 'a9s-postgresql17',
    plan: 'postgresql-single-nano',
    compositionRef: { name: 'a9s-postgresql' },
    parameters: { maxConnections, statementTimeout: 1000 + i },
  });
  /** Runs `f` for from..to-1 on `concurrency` workers; with `perSecond`, the i-th call starts no earlier than i/perSecond s in. */
  const pool = async (from: number, to: number, f: (i: number) => Promise<void>, perSecond?: number) => {
    const ids = Array.from({ length: to - from }, (_, k) => from + k);
    const t0 = performance.now();
    const workers = Array.from({ length: o.concurrency ?? 8 }, async () => {
      for (let i = ids.shift(); i !== undefined; i = ids.shift()) {
        const wait = perSecond ? t0 + ((i - from) * 1000) / perSecond - performance.now() : 0;
        if (wait > 0) await sleep(wait);
        await f(i);
      }
    });
    await Promise.all(workers);
  };
  return {
    async createNamespaces() {
      for (const n of w.namespaces)
        await retry(
          `create namespace ${n}`,
          () => w.consumer.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }),
          [409],
        );
    },
    create: (from: number, to: number, onCreated?: (i: number, at: number) => void, perSecond?: number) =>
      pool(
        from,
        to,
        async (i) => {
          await retry(
            `create ${name(i)}`,
            () =>
              call((c) =>
                c.custom.createNamespacedCustomObject({
                  ...pgApi,
                  namespace: ns(i),
                  body: {
                    apiVersion: 'anynines.com/v1',
                    kind: 'PostgresqlInstance',
                    metadata: { name: name(i), namespace: ns(i) },
                    spec: spec(i),
                  },
                }),
              ),
            [409],
          );
          onCreated?.(i, performance.now());
        },
        perSecond,
      ),
    update: (from: number, to: number, maxConnections: number) =>
      pool(from, to, (i) =>
        retry(
          `update ${name(i)}`,
          () =>
            call((c) =>
              c.custom.patchNamespacedCustomObject(
                { ...pgApi, namespace: ns(i), name: name(i), body: { spec: { parameters: { maxConnections } } } },
                MERGE_PATCH,
              ),
            ),
          [404],
        ),
      ),
    remove: (from: number, to: number) =>
      pool(from, to, (i) =>
        retry(`delete ${name(i)}`, () => w.consumer.request('DELETE', `${PG}/namespaces/${ns(i)}/postgresqlinstances/${name(i)}`), [404]),
      ),
  };
}

export interface ChaosReport {
  readonly claims: number;
  readonly upstream: number;
}

/** The report once every invariant holds, else undefined (or, with `explain`, what is still wrong). */
export async function chaosInvariants(w: ChaosWorld, explain = false): Promise<ChaosReport | undefined | Record<string, unknown>> {
  const list = async (kube: Kube, path: string): Promise<O[]> => {
    const r = await kube.request('GET', path);
    if (r.code !== 200) throw new Error(`GET ${path}: ${r.code}`);
    return r.body.items as O[];
  };
  const claims = await list(w.consumer, `${PG}/postgresqlinstances`);
  const upstream = (await list(w.provider, `${PG}/postgresqlinstances`)).filter(
    (o) => o.metadata.annotations?.[Annotations.bound] === 'true',
  );
  const sns = await list(w.provider, `/apis/klutch.anynines.com/v1alpha1/namespaces/${w.clusterNamespace}/apiservicenamespaces`);
  const mapped = new Map(sns.map((s) => [s.metadata.name, (s as unknown as { status?: { namespace?: string } }).status?.namespace]));
  const stranded = claims.filter((c) => c.metadata.deletionTimestamp).map((c) => `${c.metadata.namespace}/${c.metadata.name}`);
  const wrong: string[] = [];
  const twinKeys = new Set<string>();
  for (const c of claims) {
    const pns = mapped.get(c.metadata.namespace);
    const twins = upstream.filter((u) => u.metadata.name === c.metadata.name && u.metadata.namespace === pns);
    if (twins.length !== 1) wrong.push(`${c.metadata.namespace}/${c.metadata.name}: ${twins.length} twins`);
    else if (!jsonSubset(c.spec, twins[0]!.spec)) wrong.push(`${c.metadata.namespace}/${c.metadata.name}: spec differs upstream`);
    twinKeys.add(`${pns}/${c.metadata.name}`);
  }
  const orphaned = upstream
    .filter((u) => !twinKeys.has(`${u.metadata.namespace}/${u.metadata.name}`))
    .map((u) => `${u.metadata.namespace}/${u.metadata.name}`);
  if (stranded.length || wrong.length || orphaned.length)
    return explain
      ? { stranded, wrong: wrong.slice(0, 20), orphaned: orphaned.slice(0, 20), claims: claims.length, upstream: upstream.length }
      : undefined;
  return { claims: claims.length, upstream: upstream.length };
}
