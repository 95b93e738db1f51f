/**
 * Chaos, at a small scale (the bench runs it at full scale): claims are created, changed and deleted while the
 * leading konnector is killed (SIGKILL) again and again and each API server is restarted, one of them by a crash.
 * Afterwards every claim has exactly one upstream twin with the same spec, nothing waits behind a finalizer, and
 * nothing is left upstream without its claim.
 *
 * Own control planes (`p` provider, `c` app cluster), since it stops API servers; two konnector replicas with a short
 * lease so a killed leader's successor takes over within seconds.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render } from '../../synth/synth';
import { loadCatalog, parseYaml } from '../../harness/crossplane/catalog';
import { startControlPlanes, type ControlPlanes } from '../../harness/cluster/control-plane';
import { bindApp, installKonnectorAccess, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { eventually, getObject, kubeFor, type Kube } from '../../harness/cluster/kube';
import { providerSide, type ProviderSide } from '../../harness/parts/provider-side';
import { chaosInvariants, chaosWorkload, type ChaosReport, type ChaosWorld } from '../../harness/parts/konnector-chaos';
import { claimCrd, type XrdObject } from '../../lib/xcrd';

const files = render({ apis: await loadCatalog(), outdir: 'unused' });
const crd = claimCrd(parseYaml(files.get('packages/dataservices/apis/postgresql/definition.yaml')!)[0] as unknown as XrdObject);
const NS = 'klutch-bind';
const LEASE = ['--lease-duration=4s', '--renew-deadline=3s', '--retry-period=1s', '--heartbeat-interval=5s'];

let cp: ControlPlanes;
let provider: ProviderSide;
let kp: Kube;
let kc: Kube;
let kubeconfig: string;
let logDir: string;
const replicas = new Map<string, KonnectorProcess>();

async function start(identity: string): Promise<void> {
  replicas.set(identity, await startKonnector({ kubeconfig, namespace: NS, logDir, identity, args: LEASE }));
}

/** Kills the replica holding the Lease (as a crash would) and starts it again. */
async function killLeader(): Promise<string> {
  const holder = await eventually('a leader', async () => {
    const r = await kc.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/klutch-bind`);
    const h = (r.body.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    return h && replicas.has(h) ? h : undefined;
  });
  await replicas.get(holder)!.proc.kill();
  await start(holder);
  return holder;
}

beforeAll(async () => {
  cp = await startControlPlanes({ clusters: ['p', 'c'], log: () => undefined });
  logDir = join(cp.runDir, 'konnector');
  mkdirSync(logDir, { recursive: true });
  kp = kubeFor(cp.clusters.p!);
  kc = kubeFor(cp.clusters.c!);
  provider = await providerSide({ provider: cp.clusters.p!, crd });
  kubeconfig = await installKonnectorAccess(cp.clusters.c!, NS, [{ group: 'anynines.com', resource: 'postgresqlinstances' }]);
  await Promise.all(['k1', 'k2'].map(start));
  await bindApp(cp.clusters.c!, NS, provider, provider.exportName);
}, 300_000);

afterAll(async () => {
  await Promise.all([...replicas.values()].map((r) => r.proc.stop()));
  await provider?.stop();
  await cp?.stop();
});

describe('konnector chaos (small)', () => {
  it('converges after kills and API server restarts: one twin per claim, same spec, nothing stranded or orphaned', async () => {
    const world: ChaosWorld = {
      consumer: kc,
      provider: kp,
      clusterNamespace: provider.clusterNamespace,
      namespaces: ['team-a', 'team-b', 'team-c'],
    };
    const w = chaosWorkload(world);
    await w.createNamespaces();
    const killed: string[] = [];
    await Promise.all([w.create(0, 30), (async () => killed.push(await killLeader()))()]);
    await Promise.all([w.update(0, 15, 300), cp.restartApiServer('p')]);
    await Promise.all([w.remove(15, 25), cp.restartApiServer('c', { crash: true })]);
    await Promise.all([w.create(30, 45), (async () => killed.push(await killLeader()))()]);
    await Promise.all([w.update(30, 40, 400), w.remove(0, 5), (async () => killed.push(await killLeader()))()]);
    expect(killed).toHaveLength(3);
    // With every replica down, a claim loses its finalizer by hand and is deleted: its copy must not outlive it.
    for (const r of replicas.values()) await r.proc.kill();
    const orphan = `/apis/anynines.com/v1/namespaces/${world.namespaces[6 % 3]}/postgresqlinstances/c-6`;
    await kc.request('PATCH', orphan, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    await kc.request('DELETE', orphan);
    await Promise.all(['k1', 'k2'].map(start));
    const report = await eventually(
      'the clusters to converge',
      async () => (await chaosInvariants(world)) as ChaosReport | undefined,
      120_000,
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}\nlast state: ${JSON.stringify(await chaosInvariants(world, true))}`);
    });
    expect(report.claims).toBe(30 - 10 + 15 - 5 - 1);
  }, 300_000);

  it('says on the binding and its claims within 10 s that the control plane stopped answering, and is Ready again once it does', async () => {
    const path = `/apis/klutch.anynines.com/v1alpha1/namespaces/${NS}/apiservicebindings/${provider.exportName}`;
    const condition = async (type: string) =>
      (
        (await getObject(kc, path))?.status?.conditions as { type: string; status: string; reason?: string; message?: string }[] | undefined
      )?.find((c) => c.type === type);
    await eventually('the binding Ready', async () => ((await condition('Ready'))?.status === 'True' ? true : undefined), 60_000);
    // The claims here have no status upstream (no Crossplane): none is Ready, each is held by the control plane.
    /** Each claim's Ready message, or only the hop it names. */
    const claimsSay = async (hopOnly = true) =>
      (
        (await kc.request('GET', '/apis/anynines.com/v1/postgresqlinstances')).body.items as {
          status?: { conditions?: { type: string; message?: string }[] };
        }[]
      )
        .map((o) => o.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '')
        .map((m) => (hopOnly ? (/^held by the ([a-z ]+):/.exec(m)?.[1] ?? m) : m));
    // The previous test's restarts may have left claims held by the binding; its Ready again rewrites them.
    await eventually('every claim held by the control plane', async () =>
      (await claimsSay()).every((h) => h === 'control plane') ? true : undefined,
    );
    await cp.stopApiServer('p');
    try {
      // Not the heartbeat's failure (Heartbeating): the connection's own watches, which fail as the server goes.
      const lost = await eventually(
        'the binding saying it lost the control plane',
        async () => {
          const c = await condition('Ready');
          return c?.status === 'False' && c.reason === 'ProviderUnreachable' ? c : undefined;
        },
        10_000,
      );
      expect(lost.message).toMatch(/^lost the provider https:\/\/\S+ \(namespace [\w-]+\): .+; the konnector retries/);
      // And each claim names its binding as the hop that holds it, from the konnector's caches.
      await eventually(
        'every claim held by the binding',
        async () => ((await claimsSay()).every((h) => h === 'binding') ? true : undefined),
        10_000,
      );
      // By its reason only: the claims' readers are not the binding's (its server and namespace upstream stay there).
      const [, server, upstream] = /^lost the provider (\S+) \(namespace ([\w-]+)\)/.exec(String(lost.message))!;
      for (const m of await claimsSay(false)) {
        expect(m).toMatch(/^held by the binding: APIServiceBinding \S+ is not Ready \(ProviderUnreachable\): the konnector has lost/);
        expect(m).not.toContain(server);
        expect(m).not.toContain(upstream);
      }
    } finally {
      await cp.startApiServer('p');
    }
    await eventually('the binding Ready again', async () => ((await condition('Ready'))?.status === 'True' ? true : undefined), 60_000);
    await eventually('every claim held by the control plane again', async () =>
      (await claimsSay()).every((h) => h === 'control plane') ? true : undefined,
    );
  }, 120_000);
});
