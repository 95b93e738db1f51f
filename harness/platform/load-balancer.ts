/**
 * STAND-IN for a platform's load balancer controller (a cloud's, or MetalLB): every Service of type LoadBalancer gets
 * the next address of a pool in its status, which kube-proxy on the node then forwards, as on any cluster. The pool
 * lives only inside the run's network namespaces (docs/decisions/cloudnative-pg.md, "Exposure").
 */
import { hostAddress } from '../node/node';
import type { Kube, WireObject } from '../kube';
import { standInLoop } from '../stand-ins/stand-in-loop';

export interface LoadBalancerStandIn {
  /** The pool, e.g. `10.96.200.0/24`: what other nodes route to this cluster's node. */
  readonly pool: string;
  stop(): Promise<void>;
}

/** Starts assigning addresses from `pool` (first address .10), once a second; `say` gets a line per assignment. */
export function startLoadBalancerStandIn(kube: Kube, pool: string, say: (line: string) => void): LoadBalancerStandIn {
  let next = 10;
  const tick = async (): Promise<void> => {
    const r = await kube.request('GET', '/api/v1/services');
    if (r.code !== 200) throw new Error(`listing Services: ${r.code} ${JSON.stringify(r.body?.message ?? r.body)}`);
    for (const s of (r.body.items ?? []) as WireObject[]) {
      if (s.spec?.type !== 'LoadBalancer' || s.status?.loadBalancer?.ingress?.length) continue;
      const ip = hostAddress(pool, next++);
      const path = `/api/v1/namespaces/${s.metadata.namespace}/services/${s.metadata.name}/status`;
      const p = await kube.request('PATCH', path, { status: { loadBalancer: { ingress: [{ ip }] } } }, 'application/merge-patch+json');
      if (p.code >= 300) throw new Error(`PATCH ${path}: ${p.code} ${JSON.stringify(p.body?.message ?? p.body)}`);
      say(`load balancer (stand-in): Service ${s.metadata.namespace}/${s.metadata.name} gets ${ip}`);
    }
  };
  const loop = standInLoop('load balancer stand-in', tick, say);
  return { pool, stop: loop.stop };
}
