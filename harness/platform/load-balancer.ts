/**
 * STAND-IN for a platform's load balancer controller (a cloud's, or MetalLB): every Service of type LoadBalancer gets
 * the next address of a pool in its status, which kube-proxy on the node then forwards, as on any cluster. The pool
 * lives only inside the run's network namespaces (docs/decisions/cloudnative-pg.md, "Exposure"). Like those
 * controllers it watches Services and acts when one changes (a pass every 10 s besides), reading a Service again
 * only before it writes its address (docs/decisions/platform-api-load.md).
 */
import { watchInformer } from '../../controller';
import { hostAddress } from '../node/node';
import { getObject, type Kube, type WireObject } from '../cluster/kube';
import { standInLoop } from '../stand-ins/stand-in-loop';

export interface LoadBalancerStandIn {
  /** The pool, e.g. `10.96.200.0/24`: what other nodes route to this cluster's node. */
  readonly pool: string;
  stop(): Promise<void>;
}

type Service = WireObject & { metadata: { name: string; namespace: string } };

const waiting = (s: Service | undefined): boolean => s?.spec?.type === 'LoadBalancer' && !s.status?.loadBalancer?.ingress?.length;

/** Starts assigning addresses from `pool` (first address .10); `say` gets a line per assignment. */
export function startLoadBalancerStandIn(kube: Kube, pool: string, say: (line: string) => void): LoadBalancerStandIn {
  let next = 10;
  const services = watchInformer<Service>({ kc: kube.config, path: '/api/v1/services' });
  const tick = async (): Promise<void> => {
    for (const cached of services.list().filter(waiting)) {
      // The cache may not have our own write yet: a Service is read again before it gets an address.
      const path = `/api/v1/namespaces/${cached.metadata.namespace}/services/${cached.metadata.name}`;
      if (!waiting((await getObject(kube, path)) as Service | undefined)) continue;
      const ip = hostAddress(pool, next++);
      const p = await kube.request(
        'PATCH',
        `${path}/status`,
        { status: { loadBalancer: { ingress: [{ ip }] } } },
        'application/merge-patch+json',
      );
      // Deleted between the read and the write (an in-place restore makes its instance's Service anew): nothing to do.
      if (p.code === 404) continue;
      if (p.code >= 300) throw new Error(`PATCH ${path}/status: ${p.code} ${JSON.stringify(p.body?.message ?? p.body)}`);
      say(`load balancer (stand-in): Service ${cached.metadata.namespace}/${cached.metadata.name} gets ${ip}`);
    }
  };
  const loop = standInLoop('load balancer stand-in', tick, say, { everyMs: 10_000 });
  for (const e of ['add', 'update'] as const) services.on(e, (s) => waiting(s) && loop.wake());
  void services.start();
  return {
    pool,
    stop: async () => {
      await loop.stop();
      await services.stop();
    },
  };
}
