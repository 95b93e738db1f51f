/**
 * Whether NetworkPolicies let a peer reach a Pod's port, by the rules of the Kubernetes API (networking.k8s.io/v1),
 * for unit tests that check the policies we compose without a cluster (which combinations admit what). What traffic
 * really does is tested on the Pod platform, whose nodes enforce policies (test/support/reach.ts,
 * docs/decisions/network-policies.md).
 * Ingress only. A policy isolates the Pods its podSelector picks in its namespace; then a connection is admitted
 * when a rule of one of them matches both the peer (`from`: any peer when empty) and the port (any when empty).
 * ipBlock peers match by address, which the API leaves to the CNI for Pod addresses: here they match any peer's.
 */
import { BlockList, isIPv6 } from 'node:net';
import type {
  V1LabelSelector,
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicyPeer,
  V1NetworkPolicyPort,
} from '@kubernetes/client-node';

/** A policy as written (YAML, or a wire-shaped object whose rules say `from`). */
export interface PolicyLike {
  readonly metadata?: { readonly namespace?: string };
  readonly spec?: unknown;
}

/** The Pod traffic goes to. */
export interface Target {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Where traffic comes from: a Pod (of a namespace with labels), or the host network (a node, the kubelet) by address. */
export interface Source {
  readonly namespace?: string;
  readonly namespaceLabels?: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly ip: string;
}

function selects(s: V1LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!s) return true;
  const eq = Object.entries(s.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    eq &&
    (s.matchExpressions ?? []).every((e) => {
      const has = e.key in labels;
      const v = labels[e.key];
      switch (e.operator) {
        case 'In':
          return has && (e.values ?? []).includes(v!);
        case 'NotIn':
          return !has || !(e.values ?? []).includes(v!);
        case 'Exists':
          return has;
        case 'DoesNotExist':
          return !has;
        default:
          throw new Error(`unknown selector operator ${e.operator}`);
      }
    })
  );
}

function inBlock(cidr: string, except: readonly string[], ip: string): boolean {
  const family = (c: string) => (isIPv6(c.split('/')[0]!) ? 'ipv6' : 'ipv4');
  if (family(cidr) !== (isIPv6(ip) ? 'ipv6' : 'ipv4')) return false;
  const list = (cidrs: readonly string[]) => {
    const b = new BlockList();
    for (const c of cidrs) b.addSubnet(c.split('/')[0]!, Number(c.split('/')[1]), family(c));
    return b;
  };
  return list([cidr]).check(ip, family(cidr)) && !list(except.filter((e) => family(e) === family(cidr))).check(ip, family(cidr));
}

function peerMatches(p: V1NetworkPolicyPeer, policyNamespace: string, s: Source): boolean {
  if (p.ipBlock) return inBlock(p.ipBlock.cidr, p.ipBlock.except ?? [], s.ip);
  if (s.namespace === undefined) return false; // host traffic is no Pod of any namespace
  const nsOk = p.namespaceSelector ? selects(p.namespaceSelector, s.namespaceLabels ?? {}) : s.namespace === policyNamespace;
  return nsOk && selects(p.podSelector, s.labels ?? {});
}

function portMatches(ports: readonly V1NetworkPolicyPort[] | undefined, port: number, protocol: string): boolean {
  if (!ports?.length) return true;
  return ports.some(
    (p) =>
      (p.protocol ?? 'TCP') === protocol &&
      (p.port === undefined || (typeof p.port === 'number' && port >= p.port && port <= (p.endPort ?? p.port))),
  );
}

/** A rule's peers: `from` as written (YAML, the wire), or `_from` as client-node's type names it. */
const fromOf = (r: V1NetworkPolicyIngressRule): V1NetworkPolicyPeer[] | undefined =>
  (r as { from?: V1NetworkPolicyPeer[] }).from ?? r._from;

/** Whether `source` may open a connection to `port` of `target` under `policies` (all of the cluster's, or a file's). */
export function admitsIngress(
  policies: readonly (V1NetworkPolicy | PolicyLike)[],
  target: Target,
  source: Source,
  port: number,
  protocol = 'TCP',
): boolean {
  const isolating = (policies as V1NetworkPolicy[]).filter(
    (p) =>
      p.metadata?.namespace === target.namespace &&
      selects(p.spec?.podSelector, target.labels) &&
      (p.spec?.policyTypes ?? ['Ingress']).includes('Ingress'),
  );
  if (!isolating.length) return true;
  return isolating.some((p) =>
    (p.spec?.ingress ?? []).some(
      (r) =>
        portMatches(r.ports, port, protocol) &&
        (!fromOf(r)?.length || fromOf(r)!.some((peer) => peerMatches(peer, target.namespace, source))),
    ),
  );
}
