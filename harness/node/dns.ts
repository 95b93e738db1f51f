/**
 * The cluster DNS: CoreDNS (built from its Go module, harness/tools/coredns.ts) as a process inside the node's network
 * namespace, its kubernetes plugin watching the API server through the bridge, serving port 53 on the node's
 * address. The `kube-dns` Service (a fixed ClusterIP, the kubelet's clusterDNS) has that address as its endpoint, so
 * Pods resolve `<service>.<namespace>.svc.cluster.local` as in any cluster. A Deployment of CoreDNS would need an
 * image of it; that belongs with the images of the platform (docs/decisions/pod-node.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAt, type Kube } from '../cluster/kube';
import { launch, type Proc } from '../cluster/processes';
import type { NodeCgroup } from './cgroups';
import { publishEndpoints } from './endpoints';
import { inNode } from './netns';

export interface DnsOptions {
  readonly binary: string;
  readonly dir: string;
  readonly kubeconfig: string;
  readonly clusterDomain: string;
  readonly cgroup: NodeCgroup;
  readonly holderPid: number;
}

function corefile(o: DnsOptions): string {
  return `.:53 {
    errors
    ready 127.0.0.1:8181
    kubernetes ${o.clusterDomain} in-addr.arpa ip6.arpa {
        kubeconfig ${o.kubeconfig}
        pods insecure
        ttl 5
    }
    cache 5
    loadbalance
}
`;
}

export function startDns(o: DnsOptions): Proc {
  mkdirSync(o.dir, { recursive: true });
  const file = join(o.dir, 'Corefile');
  writeFileSync(file, corefile(o));
  return launch({
    ...inNode(o.cgroup, o.holderPid, o.binary, ['-conf', file]),
    role: 'coredns',
    owner: 'node',
    logDir: o.dir,
  });
}

/** The `kube-dns` Service at `clusterIp` and its endpoint, the node's address. */
export async function publishDns(kube: Kube, clusterIp: string, nodeIp: string): Promise<void> {
  await applyAt(kube, '/api/v1/namespaces/kube-system/services/kube-dns', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } },
    spec: {
      clusterIP: clusterIp,
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      ],
    },
  });
  await publishEndpoints(kube, 'kube-system', 'kube-dns', nodeIp, [
    { name: 'dns', port: 53, protocol: 'UDP' },
    { name: 'dns-tcp', port: 53, protocol: 'TCP' },
  ]);
}
