/**
 * kube-proxy (a mode of harness/tools/kube) in iptables mode inside the node's network namespace: its Service rules exist
 * only there. It leaves the machine-wide conntrack settings alone (maxPerCore and the timeouts 0 mean "do not set").
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { launch, type Proc } from '../cluster/processes';
import type { NodeCgroup } from './cgroups';
import { inNode } from './netns';

export interface ProxyOptions {
  readonly binary: string;
  readonly dir: string;
  readonly nodeName: string;
  readonly kubeconfig: string;
  readonly podCidr: string;
  readonly cgroup: NodeCgroup;
  readonly holderPid: number;
}

function proxyConfig(o: ProxyOptions): Record<string, unknown> {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: o.kubeconfig },
    mode: 'iptables',
    hostnameOverride: o.nodeName,
    clusterCIDR: o.podCidr,
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    iptables: { syncPeriod: '30s', minSyncPeriod: '0s' },
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
      udpTimeout: '0s',
      udpStreamTimeout: '0s',
    },
  };
}

export function startProxy(o: ProxyOptions): Proc {
  mkdirSync(o.dir, { recursive: true });
  const config = join(o.dir, 'kube-proxy.yaml');
  writeFileSync(config, stringify(proxyConfig(o)));
  return launch({
    ...inNode(o.cgroup, o.holderPid, o.binary, ['kube-proxy', `--config=${config}`, '--v=2']),
    role: 'kube-proxy',
    owner: o.nodeName,
    logDir: o.dir,
    env: { ...process.env, KUBE_EXIT_WITH_PARENT: '1' },
  });
}
