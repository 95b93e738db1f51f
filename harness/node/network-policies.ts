/**
 * The node's NetworkPolicy agent, kube-network-policies (harness/tools/network-policies), inside the node's network
 * namespace: its nftables table and netfilter queue exist only there. It sends the first packet of every connection
 * to or from a Pod that a policy selects to the agent, which admits or drops it by the policies; with the agent down
 * such packets are dropped (fail closed). Traffic that root on the node makes (the kubelet's probes, the API server
 * bridge) passes, as upstream has it.
 */
import { launch, type Proc } from '../cluster/processes';
import type { NodeCgroup } from './cgroups';
import { inNode } from './netns';

export interface NetworkPoliciesOptions {
  readonly binary: string;
  readonly dir: string;
  readonly nodeName: string;
  readonly kubeconfig: string;
  readonly cgroup: NodeCgroup;
  readonly holderPid: number;
}

export function startNetworkPolicies(o: NetworkPoliciesOptions): Proc {
  return launch({
    ...inNode(o.cgroup, o.holderPid, o.binary, [`--kubeconfig=${o.kubeconfig}`, `--hostname-override=${o.nodeName}`, '--v=2']),
    role: 'network-policies',
    owner: o.nodeName,
    logDir: o.dir,
  });
}
