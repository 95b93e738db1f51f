/**
 * Endpoints of Services whose backends are processes of the node rather than Pods (the API server bridge, CoreDNS):
 * an EndpointSlice naming the node's address, which kube-proxy turns into DNAT rules like any other.
 */
import { applyAt, type Kube } from '../cluster/kube';

export interface EndpointPort {
  readonly name: string;
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP';
}

/** Applies the EndpointSlice `<service>-node` of Service `namespace/service`: one endpoint, `ip`, with `ports`. */
export async function publishEndpoints(
  kube: Kube,
  namespace: string,
  service: string,
  ip: string,
  ports: readonly EndpointPort[],
): Promise<void> {
  const name = `${service}-node`;
  await applyAt(kube, `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices/${name}`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace,
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'node.klutch-kit.test' },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports,
  });
}
