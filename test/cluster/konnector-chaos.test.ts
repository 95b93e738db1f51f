/**
 * Chaos, at a small scale (the bench runs it at full scale): claims are created, changed and deleted while the
 * leading konnector is killed (SIGKILL) again and again and each API server is restarted, one of them by a crash.
 * Afterwards every claim has exactly one upstream twin with the same spec, nothing waits behind a finalizer, and
 * nothing is left upstream without its claim.
 *
 * Then faults of the binding, one at a time (the control plane stops answering, the kubeconfig Secret goes, the
 * konnector's role there loses the heartbeat, the control plane is of an older release): each is named on every claim
 * in the app cluster within 10 s (issue 39).
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
import { eventually, getObject, kubeFor, type Kube, type WireObject } from '../../harness/cluster/kube';
import { CLUSTER_BINDING_NAME } from '../../exports/bind-api/constants';
import { BACKEND_VERSION_ANNOTATION } from '../../lib/version';
import { binderClusterRole } from '../../backend/provision/rbac';
import type { V1ClusterRole } from '@kubernetes/client-node';
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
/** The binding's kubeconfig Secret in the app cluster. */
let kubeconfigSecret: string;
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
  kubeconfigSecret = (await bindApp(cp.clusters.c!, NS, provider, provider.exportName)).secret;
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

  /**
   * Faults of the binding, injected one at a time (issue 39 item 4): each is named on every claim of the binding in
   * the app cluster within 10 s of its injection, by its reason only, and the claims go back to the control plane's
   * words once it is undone.
   */
  const faults: readonly { name: string; reason: string; means: RegExp; inject(): Promise<void>; undo(): Promise<void> }[] = [
    {
      name: 'the control plane stops answering',
      reason: 'ProviderUnreachable',
      means: /the konnector has lost the control plane/,
      inject: () => cp.stopApiServer('p'),
      undo: () => cp.startApiServer('p'),
    },
    {
      name: "the binding's kubeconfig Secret is deleted",
      reason: 'SecretNotFound',
      means: /kubeconfig Secret is missing/,
      inject: async () => {
        const path = `/api/v1/namespaces/${NS}/secrets/${kubeconfigSecret}`;
        kept = (await getObject(kc, path))!;
        expect((await kc.request('DELETE', path)).code).toBeLessThan(300);
      },
      undo: async () => {
        const { name, namespace } = kept!.metadata;
        const r = await kc.request('POST', `/api/v1/namespaces/${NS}/secrets`, { metadata: { name, namespace }, data: kept!.data });
        expect(r.code, JSON.stringify(r.body)).toBeLessThan(300);
      },
    },
    {
      name: "the konnector's role on the control plane loses the heartbeat's write",
      reason: 'HeartbeatFailed',
      means: /cannot write its heartbeat to the control plane/,
      inject: async () => {
        const role = binderClusterRole();
        role.rules = role.rules!.filter((r) => !r.resources!.includes('clusterbindings/status'));
        await putClusterRole(role);
      },
      undo: () => putClusterRole(binderClusterRole()),
    },
    {
      name: 'the control plane is of an older release than the konnector',
      reason: 'KonnectorNewer',
      means: /older than this cluster's konnector supports/,
      inject: () => stampRelease('v0.0.1'),
      undo: () => stampRelease(null),
    },
  ];
  let kept: WireObject | undefined;
  /** The provider side's ClusterRole klutch-binder, replaced (the backend's own, as providerSide applies it). */
  const putClusterRole = async (role: V1ClusterRole) => {
    const path = `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role.metadata!.name}`;
    const now = (await getObject(kp, path))!;
    const r = await kp.request('PUT', path, { ...role, metadata: { ...role.metadata, resourceVersion: now.metadata.resourceVersion } });
    expect(r.code, JSON.stringify(r.body)).toBeLessThan(300);
  };
  const stampRelease = async (release: string | null) => {
    const path = `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/clusterbindings/${CLUSTER_BINDING_NAME}`;
    const body = { metadata: { annotations: { [BACKEND_VERSION_ANNOTATION]: release } } };
    const r = await kp.request('PATCH', path, body, 'application/merge-patch+json');
    expect(r.code, JSON.stringify(r.body)).toBeLessThan(300);
  };

  it('names each fault of the binding on its claims within 10 s, one at a time, and the control plane again once undone', async () => {
    const path = `/apis/klutch.anynines.com/v1alpha1/namespaces/${NS}/apiservicebindings/${provider.exportName}`;
    const condition = async (type: string) =>
      (
        (await getObject(kc, path))?.status?.conditions as { type: string; status: string; reason?: string; message?: string }[] | undefined
      )?.find((c) => c.type === type);
    await eventually('the binding Ready', async () => ((await condition('Ready'))?.status === 'True' ? true : undefined), 60_000);
    // The claims here have no status upstream (no Crossplane): none is Ready, each is held by the control plane.
    const claimsSay = async () =>
      (
        (await kc.request('GET', '/apis/anynines.com/v1/postgresqlinstances')).body.items as {
          status?: { conditions?: { type: string; message?: string }[] };
        }[]
      ).map((o) => o.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '');
    const heldBy = async () => (await claimsSay()).map((m) => /^held by the ([a-z ]+):/.exec(m)?.[1] ?? m);
    const named: Record<string, number> = {};
    for (const f of faults) {
      // The previous fault's (or test's) claims are back with the control plane's words before the next is injected.
      await eventually(`every claim held by the control plane before "${f.name}"`, async () =>
        (await heldBy()).every((h) => h === 'control plane') ? true : undefined,
      );
      await f.inject();
      const at = Date.now();
      try {
        const said = `held by the binding: APIServiceBinding ${provider.exportName} is not Ready (${f.reason}): `;
        await eventually(
          `every claim naming the binding's ${f.reason} after "${f.name}"`,
          async () => ((await claimsSay()).every((m) => m.startsWith(said)) ? true : undefined),
          10_000,
        );
        named[f.reason] = Date.now() - at;
        const ready = await condition('Ready');
        expect(ready).toMatchObject({ status: 'False', reason: f.reason });
        for (const m of await claimsSay()) {
          expect(m).toMatch(f.means);
          // By its reason only: the binding's own message is for its administrator (it names the control plane's
          // server, the binding's namespace there, Secrets).
          expect(m).not.toContain(String(ready!.message));
          expect(m).not.toContain(provider.clusterNamespace);
        }
      } finally {
        await f.undo();
      }
      await eventually(
        `the binding Ready again after "${f.name}"`,
        async () => ((await condition('Ready'))?.status === 'True' ? true : undefined),
        60_000,
      );
    }
    expect(Object.keys(named)).toEqual(faults.map((f) => f.reason));
    await eventually('every claim held by the control plane again', async () =>
      (await heldBy()).every((h) => h === 'control plane') ? true : undefined,
    );
  }, 180_000);
});
