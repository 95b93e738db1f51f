/**
 * The controller machinery (controller/) against real API servers: informers that survive an API server restart,
 * a controller reconciling from them, and leader election on a Lease (one leader; release on shutdown; a leader that
 * cannot renew stops leading and is replaced).
 */
import { CoreV1Api, KubeConfig, type RequestContext, type V1ConfigMap } from '@kubernetes/client-node';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Controller,
  eventRecorder,
  keepAliveClient,
  keepAliveConfiguration,
  LeaderElector,
  objectKey,
  splitKey,
  watchInformer,
} from '../../controller';
import { admin, cluster, controlPlanes, testNamespace } from '../support/cluster';
import { startControlPlanes, type ControlPlanes } from '../../harness/cluster/control-plane';
import { eventually, kubeFor } from '../../harness/cluster/kube';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { sleep } from '../../lib/abort';
import { pino } from 'pino';
import { Registry } from 'prom-client';

function configMapInformer(kc: KubeConfig, namespace: string) {
  return watchInformer<V1ConfigMap>({
    kc,
    path: `/api/v1/namespaces/${namespace}/configmaps`,
    minRestartDelayMs: 50,
    maxRestartDelayMs: 500,
  });
}

describe('informer and controller on a real API server', () => {
  let cp: ControlPlanes;
  beforeAll(async () => {
    await controlPlanes(); // the binary is built by then
    cp = await startControlPlanes({ clusters: ['ctl'], binary: kubeBinaryPath(), log: () => undefined });
  });
  afterAll(async () => {
    await cp?.stop();
  });

  it('lists, then sees adds, updates and deletes; after an API server crash it resumes and sees what changed', async () => {
    const kube = kubeFor(cp.clusters.ctl!);
    const ns = 'default';
    await kube.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'before' }, data: { v: '1' } } });
    const informer = configMapInformer(kube.config, ns);
    const events: string[] = [];
    informer.on('add', (o) => events.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => events.push(`update ${o.metadata?.name} ${o.data?.v}`));
    informer.on('delete', (o) => events.push(`delete ${o.metadata?.name}`));
    expect(informer.hasSynced()).toBe(false);
    await informer.start();
    await informer.synced;
    expect(informer.get('before', ns)?.data).toEqual({ v: '1' });
    try {
      await kube.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'during' }, data: { v: '1' } } });
      const patched = await kube.request(
        'PATCH',
        `/api/v1/namespaces/${ns}/configmaps/before`,
        { data: { v: '2' } },
        'application/merge-patch+json',
      );
      expect(patched.code).toBe(200);
      await eventually('the update', async () => (events.includes('update before 2') ? true : undefined), 10_000);

      await cp.restartApiServer('ctl', { crash: true });
      await kube.core.deleteNamespacedConfigMap({ namespace: ns, name: 'during' });
      await kube.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'after' }, data: { v: '1' } } });
      await eventually('the changes made after the restart', async () =>
        informer.get('after', ns) && !informer.get('during', ns) ? true : undefined,
      );
      expect(events).toEqual(expect.arrayContaining(['add before', 'add during', 'update before 2', 'delete during', 'add after']));
      expect(informer.lastError(), 'the watch runs again').toBeUndefined();
    } finally {
      await informer.stop();
    }
  });

  it("runs a KubeConfig's watches as streams of a few HTTP/2 connections: 150 per-name watches open no 150 connections", async () => {
    // A konnector that may read its shared Secrets only by name watches each on its own (issue 40).
    const kube = kubeFor(cp.clusters.ctl!);
    const port = Number(new URL(cp.clusters.ctl!.server).port);
    const before = connectionsTo(port);
    const informers = Array.from({ length: 150 }, (_, i) =>
      watchInformer({ kc: kube.config, path: '/api/v1/namespaces/default/secrets', fieldSelector: `metadata.name=b-${i}-creds` }),
    );
    try {
      await Promise.all(informers.map((i) => i.start()));
      await Promise.all(informers.map((i) => i.synced));
      await sleep(1_000); // every watch open
      const opened = connectionsTo(port) - before;
      // The lists (a keep-alive pool of 8) and the watches (150 streams, 100 to a connection).
      expect(opened, 'new connections to the API server').toBeLessThanOrEqual(10);
      await kube.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'b-149-creds' }, stringData: { a: 'b' } } });
      await eventually('the last watch sees its Secret', async () => (informers[149]!.get('b-149-creds', 'default') ? true : undefined));
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
      await kube.request('DELETE', '/api/v1/namespaces/default/secrets/b-149-creds');
    }
  });

  it('passes listed objects and watch events through its transform before the cache and the handlers', async () => {
    const kube = kubeFor(cp.clusters.ctl!);
    const ns = 'default';
    await kube.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'listed' }, data: { v: '1' } } });
    const informer = watchInformer<V1ConfigMap>({
      kc: kube.config,
      path: `/api/v1/namespaces/${ns}/configmaps`,
      transform: (o) => {
        delete o.metadata?.managedFields;
        o.data = { ...o.data, seen: 'transformed' };
        return o;
      },
    });
    const handed: V1ConfigMap[] = [];
    informer.on('add', (o) => handed.push(o));
    informer.on('update', (o) => handed.push(o));
    await informer.start();
    await informer.synced;
    try {
      await kube.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'watched' }, data: { v: '1' } } });
      await kube.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/listed`, { data: { v: '2' } }, 'application/merge-patch+json');
      await eventually('the add and the update', async () =>
        informer.get('watched', ns) && informer.get('listed', ns)?.data?.v === '2' ? true : undefined,
      );
      // The API server sets managedFields on every write: only the transform took them away.
      expect((await kube.core.readNamespacedConfigMap({ namespace: ns, name: 'watched' })).metadata?.managedFields?.length).toBeGreaterThan(
        0,
      );
      for (const name of ['listed', 'watched']) {
        expect(informer.get(name, ns)?.metadata?.managedFields, name).toBeUndefined();
        expect(informer.get(name, ns)?.data?.seen, name).toBe('transformed');
      }
      expect(handed.length).toBeGreaterThanOrEqual(3);
      for (const o of handed) expect(o.data?.seen, `${o.metadata?.name} as handed to a handler`).toBe('transformed');
    } finally {
      await informer.stop();
      for (const name of ['listed', 'watched']) await kube.core.deleteNamespacedConfigMap({ namespace: ns, name });
    }
  });

  it('reconciles from the cache: a controller keeps a copy of every ConfigMap labelled source', async () => {
    const kube = kubeFor(cp.clusters.ctl!);
    const ns = await testNamespace(kube, 'ctl');
    const informer = configMapInformer(kube.config, ns);
    const ac = new AbortController();
    const controller = new Controller({
      name: 'copier',
      workers: 2,
      reconcile: async (key) => {
        const { namespace, name } = splitKey(key);
        if (name.endsWith('-copy')) return;
        const src = informer.get(name, namespace);
        if (!src) {
          await kube.core.deleteNamespacedConfigMap({ namespace: namespace!, name: `${name}-copy` }).catch(() => undefined);
          return;
        }
        const body = { metadata: { name: `${name}-copy`, namespace }, data: src.data };
        await kube.core
          .replaceNamespacedConfigMap({ namespace: namespace!, name: `${name}-copy`, body })
          .catch(() => kube.core.createNamespacedConfigMap({ namespace: namespace!, body }));
      },
    }).watch(informer, (o) => [objectKey(o)]);
    await informer.start();
    const running = controller.run(ac.signal);
    try {
      for (let i = 0; i < 5; i++)
        await kube.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `cm${i}` }, data: { i: String(i) } } });
      await eventually('five copies', async () =>
        (await kube.core.listNamespacedConfigMap({ namespace: ns })).items.length >= 10 ? true : undefined,
      );
      await kube.core.deleteNamespacedConfigMap({ namespace: ns, name: 'cm0' });
      await eventually('the copy of cm0 to go', async () =>
        (await kube.request('GET', `/api/v1/namespaces/${ns}/configmaps/cm0-copy`)).code === 404 ? true : undefined,
      );
      expect((await kube.core.readNamespacedConfigMap({ namespace: ns, name: 'cm3-copy' })).data).toEqual({ i: '3' });
    } finally {
      ac.abort();
      await running;
      await informer.stop();
    }
  });
});

describe('keep-alive clients', () => {
  it('hold to a client-side rate limit (--kube-api-qps): a burst passes, the rest wait their turn', async () => {
    const kc = (await admin('a')).config;
    const core = keepAliveClient(kc, CoreV1Api, keepAliveConfiguration(kc, { rateLimit: { qps: 4, burst: 1 } }));
    const start = performance.now();
    const items = await Promise.all(Array.from({ length: 5 }, () => core.listNamespace({ limit: 1 })));
    expect(items.every((l) => l.items.length === 1)).toBe(true);
    // One at once, then one every 250 ms: the fifth no sooner than a second after the first.
    expect(performance.now() - start).toBeGreaterThanOrEqual(990);
  });
});

/** A copy of `kc` that notes the method of every request made through it (client-node calls this once a request). */
class MethodsSeen extends KubeConfig {
  readonly methods: string[] = [];
  constructor(kc: KubeConfig) {
    super();
    this.loadFromString(kc.exportConfig());
  }
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    this.methods.push(context.getHttpMethod());
    await super.applySecurityAuthentication(context);
  }
}

describe('leader election on a Lease', () => {
  const timing = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 400 };

  it('elects one leader; on shutdown it releases the Lease and the other candidate takes over at once', async () => {
    const kube = await admin('a');
    const ns = await testNamespace(kube, 'lease');
    const leading = new Set<string>();
    const kcs = new Map<string, MethodsSeen>();
    const candidate = (identity: string) => {
      const ac = new AbortController();
      const kc = new MethodsSeen(kube.config);
      kcs.set(identity, kc);
      const elector = new LeaderElector({
        kc,
        namespace: ns,
        name: 'klutch-test',
        identity,
        ...timing,
        onStartedLeading: (signal) => {
          leading.add(identity);
          signal.addEventListener('abort', () => leading.delete(identity));
        },
      });
      return { elector, ac, done: elector.run(ac.signal) };
    };
    const one = candidate('one');
    await eventually('a leader', async () => (leading.size === 1 ? true : undefined));
    const two = candidate('two');
    const seenBefore = kcs.get('one')!.methods.length;
    await sleep(1500);
    expect([...leading], 'still exactly one leader').toEqual(['one']);
    // The leader renews with one write each retry period, without reading the Lease first (client-go's fast path).
    const renewals = kcs.get('one')!.methods.slice(seenBefore);
    expect(renewals.length, `the leader's requests while it led: ${renewals.join(' ')}`).toBeGreaterThanOrEqual(2);
    expect(new Set(renewals), `the leader's requests while it led: ${renewals.join(' ')}`).toEqual(new Set(['PUT']));
    const lease = await kube.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/klutch-test`);
    expect((lease.body.spec as { holderIdentity: string }).holderIdentity).toBe('one');

    const stoppedAt = Date.now();
    one.ac.abort();
    await one.done;
    await eventually('two to lead', async () => (leading.has('two') ? true : undefined));
    expect(Date.now() - stoppedAt, 'no need to wait out the lease after a release').toBeLessThan(timing.leaseDurationMs);
    expect(leading.size).toBe(1);
    two.ac.abort();
    await two.done;
  });

  it('a leader that cannot renew stops leading; another takes over after the lease expires', async () => {
    const c = await cluster('a');
    const kube = kubeFor(c);
    const ns = await testNamespace(kube, 'lease');
    // The doomed candidate uses a ServiceAccount token whose only grant is a RoleBinding: deleting the binding cuts
    // it off at once (RBAC follows its informers within milliseconds; deleting the account instead waited out the
    // API server's 10 s token cache).
    await kube.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'doomed' } } });
    await kube.rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'leases' },
        rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
      },
    });
    await kube.rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'doomed-leases' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leases' },
        subjects: [{ kind: 'ServiceAccount', name: 'doomed', namespace: ns }],
      },
    });
    const token = (
      await kube.core.createNamespacedServiceAccountToken({ namespace: ns, name: 'doomed', body: { spec: { audiences: [] } } })
    ).status!.token!;
    const doomedKube = kubeFor(c, 'doomed', token);
    const events: string[] = [];
    const run = (identity: string, kc: KubeConfig) => {
      const ac = new AbortController();
      const done = new LeaderElector({
        kc,
        namespace: ns,
        name: 'klutch-test',
        identity,
        ...timing,
        onStartedLeading: (signal) => {
          events.push(`${identity} leads`);
          signal.addEventListener('abort', () => events.push(`${identity} stops`));
        },
      }).run(ac.signal);
      return { ac, done };
    };
    const doomed = run('doomed', doomedKube.config);
    await eventually('doomed to lead', async () => (events.includes('doomed leads') ? true : undefined));
    const heir = run('heir', kube.config);
    const cutAt = Date.now();
    await kube.rbac.deleteNamespacedRoleBinding({ namespace: ns, name: 'doomed-leases' });
    await eventually('the heir to lead', async () => (events.includes('heir leads') ? true : undefined), 30_000);
    // Renewals refused from the cut on: the doomed stops within its renew deadline, the heir leads once the lease
    // it last renewed expired; neither waits for anything longer.
    expect(Date.now() - cutAt, 'the heir leads within a lease and a renew deadline of the cut').toBeLessThan(
      timing.leaseDurationMs + timing.renewDeadlineMs + 2 * timing.retryPeriodMs + 4_000,
    );
    expect(events.indexOf('doomed stops'), 'the old leader stopped before the heir started').toBeGreaterThanOrEqual(0);
    expect(events.indexOf('doomed stops')).toBeLessThan(events.indexOf('heir leads'));
    doomed.ac.abort();
    heir.ac.abort();
    await Promise.all([doomed.done, heir.done]);
  });

  it('a candidate whose Lease namespace is missing says why at warn, once a minute, counts it, and leads once it exists', async () => {
    const c = await cluster('a');
    const kube = kubeFor(c);
    const ns = `lease-missing-${Date.now().toString(36)}`;
    const lines: { level: number; msg: string; code?: string; fix?: string }[] = [];
    const log = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const registry = new Registry();
    const events: string[] = [];
    const ac = new AbortController();
    const done = new LeaderElector({
      kc: kube.config,
      namespace: ns,
      name: 'klutch-test',
      identity: 'lonely',
      ...timing,
      namespaceFlag: '--namespace',
      log,
      registry,
      onStartedLeading: () => void events.push('leads'),
    }).run(ac.signal);
    // Several retry periods: the same problem is logged once, however often the candidate tries.
    await sleep(timing.leaseDurationMs + 5 * timing.retryPeriodMs);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((w) => w.msg)).toEqual([
      `cannot create Lease ${ns}/klutch-test: namespace ${ns} does not exist (namespaces "${ns}" not found); no controller runs on this replica until it can. Create it (kubectl create namespace ${ns}) or start with --namespace=<a namespace that exists>.`,
    ]);
    expect(warnings[0]).toMatchObject({ code: '404' });
    const metrics = await registry.metrics();
    expect(Number(/^klutch_leader_election_errors_total\{name="klutch-test",code="404"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(3);
    expect(Number(/^klutch_leader_election_leaderless_seconds\{name="klutch-test"\} ([\d.]+)$/m.exec(metrics)?.[1])).toBeGreaterThan(
      timing.leaseDurationMs / 1000,
    );
    expect(events).toEqual([]);

    await kube.core.createNamespace({ body: { metadata: { name: ns } } });
    try {
      await eventually('the candidate to lead', async () => (events.includes('leads') ? true : undefined), 15_000);
      expect(lines.map((l) => l.msg)).toContain(`Lease ${ns}/klutch-test written again`);
      expect(/^klutch_leader_election_leaderless_seconds\{name="klutch-test"\} 0$/m.test(await registry.metrics())).toBe(true);
    } finally {
      ac.abort();
      await done;
      await kube.request('DELETE', `/api/v1/namespaces/${ns}`);
    }
  });

  it('a candidate that may not write Leases says so at warn with the status and the fix', async () => {
    const c = await cluster('a');
    const kube = kubeFor(c);
    const ns = await testNamespace(kube, 'lease');
    await kube.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'unbound' } } });
    const token = (
      await kube.core.createNamespacedServiceAccountToken({ namespace: ns, name: 'unbound', body: { spec: { audiences: [] } } })
    ).status!.token!;
    const lines: { level: number; msg: string; code?: string }[] = [];
    const ac = new AbortController();
    const done = new LeaderElector({
      kc: kubeFor(c, 'unbound', token).config,
      namespace: ns,
      name: 'klutch-test',
      identity: 'unbound',
      ...timing,
      log: pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) }),
      onStartedLeading: () => undefined,
    }).run(ac.signal);
    try {
      const warning = await eventually('a warning', async () => lines.find((l) => l.level === 40));
      expect(warning).toMatchObject({ code: '403' });
      expect(warning.msg).toMatch(
        new RegExp(
          `^cannot read Lease ${ns}/klutch-test: forbidden \\(.*system:serviceaccount:${ns}:unbound.*\\); no controller runs on this replica until it can\\. Grant this replica's identity get, create and update on leases\\.coordination\\.k8s\\.io in namespace ${ns}`,
        ),
      );
    } finally {
      ac.abort();
      await done;
    }
  });

  it('refuses timings that would let two leaders overlap', () => {
    expect(
      () =>
        new LeaderElector({
          kc: {} as KubeConfig,
          namespace: 'x',
          name: 'y',
          identity: 'z',
          leaseDurationMs: 5000,
          renewDeadlineMs: 5000,
          onStartedLeading: () => {},
        }),
    ).toThrow('leaseDurationMs (5000) must be greater than renewDeadlineMs (5000)');
  });
});

describe('Warning Events', () => {
  it('write at most a burst per namespace, however many objects fail there, and another namespace still gets its own', async () => {
    const kube = await admin();
    const [flooded, quiet] = [await testNamespace(kube, 'events'), await testNamespace(kube, 'events')];
    let clock = 0;
    const warn = eventRecorder({
      core: kube.core,
      log: pino({ level: 'silent' }),
      component: 'test',
      burst: 5,
      refillMs: 1_000,
      now: () => clock,
    });
    // A tenant's 40 failing objects (export requests, say): one warning each.
    const subject = (ns: string, i: number) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: ns, uid: `${ns}-${i}` },
    });
    for (let i = 0; i < 40; i++) warn(subject(flooded, i), 'Failed', `object ${i} failed`);
    warn(subject(quiet, 0), 'Failed', 'object 0 failed');
    const events = async (ns: string) => ((await kube.core.listNamespacedEvent({ namespace: ns })).items ?? []).length;
    await eventually('the events written', async () => ((await events(quiet)) === 1 && (await events(flooded)) === 5 ? true : undefined));
    // Two seconds on, two more.
    clock += 2_000;
    for (let i = 40; i < 50; i++) warn(subject(flooded, i), 'Failed', `object ${i} failed`);
    await eventually('two more events', async () => ((await events(flooded)) === 7 ? true : undefined));
    await sleep(500);
    expect(await events(flooded)).toBe(7);
  });
});

/** TCP connections of this process to `port` on loopback that are established (from /proc: sockets and their fds). */
function connectionsTo(port: number): number {
  const mine = new Set(
    readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
        return m ? [m[1]!] : [];
      } catch {
        return []; // closed meanwhile
      }
    }),
  );
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/self/net/tcp', '/proc/self/net/tcp6']
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').slice(1))
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length > 9 && c[2]!.endsWith(`:${hex}`) && c[3] === '01' && mine.has(c[9]!)).length;
}
