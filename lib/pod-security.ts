/**
 * What makes our Pods (the bind backend's, the konnector's) pass the Pod Security `restricted` profile, their
 * Namespaces enforce it, and their namespaces admit exactly the traffic they need. One definition for every deploy
 * construct, so the deployables cannot drift apart.
 */
import {
  Capability,
  NetworkPolicy,
  NetworkPolicyIpBlock,
  NetworkPolicyPort,
  NetworkPolicyTrafficDefault,
  Namespaces,
  SeccompProfileType,
  type ContainerSecurityContextProps,
  type IPodSelector,
} from 'cdk8s-plus-33';
import { Construct } from 'constructs';

/** The distroless image's `nonroot` user and group (synth/deployables.ts writes `USER 65532:65532`). */
export const RUNTIME_USER = 65532;

/** A container of the `restricted` profile: non-root by number, no privilege escalation, no capabilities, RuntimeDefault seccomp. */
export const RESTRICTED_CONTAINER: ContainerSecurityContextProps = {
  ensureNonRoot: true,
  user: RUNTIME_USER,
  group: RUNTIME_USER,
  privileged: false,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: [Capability.ALL] },
  seccompProfile: { type: SeccompProfileType.RUNTIME_DEFAULT },
};

/** Pod Security Admission: refuse (and warn about, and audit) any Pod below `restricted` in the namespace. */
export const RESTRICTED_NAMESPACE_LABELS: Readonly<Record<string, string>> = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
};

/** The API servers' and OpenID provider's ports an egress policy allows by default. */
export const DEFAULT_API_PORTS: readonly number[] = [443, 6443];

export interface NamespacePoliciesProps {
  readonly namespace: string;
  /** Name of the allow policy (the app's name). */
  readonly name: string;
  /** The Pods the allow policy is for. */
  readonly pods: IPodSelector;
  /** Ports anyone may reach: any address and any Pod (browsers, CLIs, an ingress controller). @default none */
  readonly publicPorts?: readonly number[];
  /** Probe and metrics port(s), reachable only from `monitoringNamespace`. */
  readonly probePorts: readonly number[];
  readonly monitoringNamespace?: string;
  /** TCP ports of the API servers (and OpenID provider) the Pods call. @default DEFAULT_API_PORTS */
  readonly apiPorts?: readonly number[];
  /**
   * Deny all traffic of every other Pod of the namespace too. Only for a namespace of our own: in a shared one the
   * allow policy alone fences `pods` (it lists both policy types), and other workloads keep their traffic. @default true
   */
  readonly denyNamespace?: boolean;
}

/**
 * A default-deny NetworkPolicy for every Pod of the namespace, and one that lets `pods` do exactly what they need:
 * `publicPorts` from anywhere, `probePorts` from `monitoringNamespace` only, DNS, and TCP to `apiPorts`.
 *
 * Kubelet probes come from the node and are not subject to NetworkPolicy on most CNIs, so without a monitoring
 * namespace nothing but the kubelet reaches the probe port. Egress names ports, not addresses: the API servers and
 * the OpenID provider are known only at run time. A Service's ClusterIP is translated before the policy is checked,
 * so the in-cluster API server is reached on its endpoint port (6443 on most clusters). Some CNIs (Cilium) do not
 * match the host network or Pods with ipBlock peers: there allow the API server with the CNI's own policy.
 */
export class NamespacePolicies extends Construct {
  constructor(scope: Construct, id: string, p: NamespacePoliciesProps) {
    super(scope, id);
    const deny = NetworkPolicyTrafficDefault.DENY;
    if (p.denyNamespace ?? true)
      new NetworkPolicy(this, 'DefaultDeny', {
        metadata: { name: 'default-deny', namespace: p.namespace },
        ingress: { default: deny },
        egress: { default: deny },
      });
    const allow = new NetworkPolicy(this, 'Allow', {
      metadata: { name: p.name, namespace: p.namespace },
      selector: p.pods,
      ingress: { default: deny },
      egress: { default: deny },
    });
    const anywhere = [NetworkPolicyIpBlock.anyIpv4(this, 'AnyIpv4'), NetworkPolicyIpBlock.anyIpv6(this, 'AnyIpv6')];
    const tcp = (ports: readonly number[]) => ports.map((n) => NetworkPolicyPort.tcp(n));
    const allPods = Namespaces.all(this, 'AllPods');
    // Some CNIs match Pods only by selector, never by ipBlock: both kinds of peer.
    if (p.publicPorts?.length) for (const peer of [allPods, ...anywhere]) allow.addIngressRule(peer, tcp(p.publicPorts));
    if (p.monitoringNamespace)
      allow.addIngressRule(Namespaces.select(this, 'Monitoring', { names: [p.monitoringNamespace] }), tcp(p.probePorts));
    const dns = [NetworkPolicyPort.udp(53), NetworkPolicyPort.tcp(53)];
    // Cluster DNS runs as Pods (kube-system) or on the node (NodeLocal DNSCache): both kinds of peer.
    allow.addEgressRule(allPods, dns);
    for (const peer of anywhere) allow.addEgressRule(peer, dns);
    for (const peer of anywhere) allow.addEgressRule(peer, tcp(p.apiPorts ?? DEFAULT_API_PORTS));
  }
}

/** Refuses a port list that is empty or holds a non-port, naming the construct and field. */
export function checkPorts(where: string, field: string, ports: readonly number[] | undefined): void {
  if (ports === undefined) return;
  if (ports.length === 0) throw new Error(`${where}: ${field} is empty; leave it out for ${DEFAULT_API_PORTS.join(', ')}`);
  for (const n of ports) if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${where}: ${field}: ${n} is not a TCP port`);
}
