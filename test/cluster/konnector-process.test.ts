/**
 * The konnector as a process: two replicas elect one leader on the Lease, both answer /healthz and /readyz, the
 * leader's /metrics carries queue depth and sync latency per direction, and SIGTERM finishes the work in flight,
 * releases the Lease so the standby leads at once, and exits 0. On the shared clusters (`a` provider, `b` app), with
 * an API no other suite binds (SearchInstance), in a namespace of its own.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render } from '../../synth/synth';
import { loadCatalog, parseYaml } from '../../harness/crossplane/catalog';
import { cluster, controlPlanes } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { bindApp, installKonnectorAccess, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { eventually, kubeFor, type Kube } from '../../harness/cluster/kube';
import { probe } from '../../harness/cluster/processes';
import { providerSide, type ProviderSide } from '../../harness/parts/provider-side';
import { claimCrd, type XrdObject } from '../../lib/xcrd';

const files = render({ apis: await loadCatalog(), outdir: 'unused' });
const crd = claimCrd(parseYaml(files.get('packages/dataservices/apis/search/definition.yaml')!)[0] as unknown as XrdObject);
const ns = `kp-${Math.random().toString(36).slice(2, 8)}`;
const spec = { service: 'a9s-search2', plan: 'search-single-nano-ssl', compositionRef: { name: 'a9s-search' } };
const lease = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/klutch-bind`;

let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let provider: ProviderSide;
const replicas = new Map<string, KonnectorProcess>();

const holder = async () => ((await kb.request('GET', lease)).body.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
const claimUp = async (name: string) => {
  const r = await kb.request('POST', `/apis/anynines.com/v1/namespaces/${ns}/searchinstances`, {
    apiVersion: 'anynines.com/v1',
    kind: 'SearchInstance',
    metadata: { name, namespace: ns },
    spec,
  });
  if (r.code >= 300) throw new Error(JSON.stringify(r.body.message));
  const pns = `${provider.clusterNamespace}-${ns}`;
  return eventually(`${name} upstream`, async () =>
    (await ka.request('GET', `/apis/anynines.com/v1/namespaces/${pns}/searchinstances/${name}`)).code === 200 ? true : undefined,
  );
};

beforeAll(async () => {
  a = await cluster('a');
  b = await cluster('b');
  ka = kubeFor(a);
  kb = kubeFor(b);
  provider = await providerSide({ provider: a, crd });
  const kubeconfig = await installKonnectorAccess(b, ns, [{ group: 'anynines.com', resource: 'searchinstances' }]);
  const logDir = join((await controlPlanes()).runDir, 'konnector', ns);
  for (const identity of ['r1', 'r2']) replicas.set(identity, await startKonnector({ kubeconfig, namespace: ns, logDir, identity }));
  await bindApp(b, ns, provider, provider.exportName);
  await eventually('the binding Ready', async () => {
    const o = (await kb.request('GET', `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicebindings/${provider.exportName}`))
      .body as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    return o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
  });
}, 120_000);

afterAll(async () => {
  await Promise.all([...replicas.values()].map((r) => r.proc.stop()));
  await provider?.remove();
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
});

describe('konnector process', () => {
  it('elects one leader; both replicas are live and ready', async () => {
    const leader = await eventually('a leader', async () => {
      const h = await holder();
      return h && replicas.has(h) ? h : undefined;
    });
    expect(['r1', 'r2']).toContain(leader);
    // The leader installs the APIServiceBinding CRD itself (server-side apply under its field manager).
    const crd = (await kb.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apiservicebindings.klutch.anynines.com'))
      .body as {
      metadata: { managedFields: { manager: string }[] };
    };
    expect(crd.metadata.managedFields.map((m) => m.manager)).toContain('klutch.anynines.com');
    for (const r of replicas.values()) {
      expect((await probe(`${r.url}/healthz`)).code).toBe(200);
      await eventually('ready', async () => ((await probe(`${r.url}/readyz`)).code === 200 ? true : undefined));
    }
  });

  it("reports queue depth, reconciles and sync latency per direction on the leader's /metrics", async () => {
    await claimUp('metrics');
    const leader = replicas.get((await holder())!)!;
    const text = await eventually('sync metrics', async () => {
      const m = (await probe(`${leader.url}/metrics`)).body;
      return /klutch_konnector_sync_duration_seconds_count\{direction="up"\} [1-9]/.test(m) ? m : undefined;
    });
    // controller-runtime's and client-go's names, so their dashboards and alerts work unchanged.
    const spec = `spec/${ns}/searchinstances.anynines.com`;
    expect(text).toMatch(new RegExp(`workqueue_depth\\{controller="${spec}",name="${spec}"\\}`));
    expect(text).toMatch(/controller_runtime_reconcile_total\{controller="bindings",result="(success|requeue_after)"\} [1-9]/);
    expect(text).toMatch(/^leader_election_master_status\{name="[^"]+"\} 1$/m);
    const standby = [...replicas.values()].find((r) => r !== leader)!;
    expect((await probe(`${standby.url}/metrics`)).body).toMatch(/^leader_election_master_status\{name="[^"]+"\} 0$/m);
    expect(text).toContain('klutch_konnector_sync_errors_total');
    expect(text).toMatch(/klutch_konnector_provider_connections 1/);
  });

  it('on SIGTERM finishes, releases the Lease so the standby leads at once, and exits 0', async () => {
    const leaderId = (await holder())!;
    const leader = replicas.get(leaderId)!;
    const standby = [...replicas.keys()].find((k) => k !== leaderId)!;
    const t = performance.now();
    await leader.proc.stop(20_000);
    expect(leader.proc.exited()).toBe('code 0');
    replicas.delete(leaderId);
    const next = await eventually('the standby leads', async () => ((await holder()) === standby ? standby : undefined), 10_000);
    // Well below the 15 s lease: the Lease was released, not waited out.
    expect(performance.now() - t).toBeLessThan(8_000);
    expect(next).toBe(standby);
    await claimUp('after-handover');
  });
});
