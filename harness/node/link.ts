/**
 * A cable between two nodes of the run: a veth pair whose ends live in the two nodes' network namespaces, with routes
 * for the addresses one node offers the other (a load balancer's addresses, say). Nothing touches the machine's own
 * interfaces, and the cable ends with either namespace: a node's stop() leaves nothing of it behind.
 */
import type { Node } from './node';
import { program } from '../tools/programs';

export interface NodeLink {
  /** `from`'s end of the cable and `to`'s, on a /30 of their own. */
  readonly fromIp: string;
  readonly toIp: string;
}

export interface LinkOptions {
  /** Prefixes `from` reaches through `to` (e.g. the load balancer pool of `to`'s cluster). */
  readonly routes: readonly string[];
  /** `from`'s Pod prefix, routed back from `to` (the replies' way when `to` does not masquerade). */
  readonly fromPodCidr: string;
  /** The /30 the two ends take. @default 10.255.0.0/30 */
  readonly linkCidr?: string;
}

const LINK = 'kklink';

/** Runs a command in a node's namespaces; throws naming the node, the command and its output. */
function run(node: Node, command: string, args: readonly string[]): void {
  const r = node.exec(command, args);
  if (r.code !== 0) throw new Error(`linking nodes: ${command} ${args.join(' ')} in node ${node.name} failed (${r.code}): ${r.output}`);
}

/** Links `from` to `to`: `from` reaches `o.routes` through `to`; `to` answers `from`'s Pods the same way. */
export function linkNodes(from: Node, to: Node, o: LinkOptions): NodeLink {
  const holder = to.procs.find((p) => p.role === 'namespaces');
  if (!holder) throw new Error(`node ${to.name} has no namespaces holder process: is it running?`);
  const base = (o.linkCidr ?? '10.255.0.0/30').split('/')[0]!.split('.').map(Number);
  const at = (n: number) => [...base.slice(0, 3), base[3]! + n].join('.');
  const fromIp = at(1);
  const toIp = at(2);
  // Made in `from`'s namespace, its peer moved into `to`'s (named by the holder's pid: nsenter enters net and mount only).
  run(from, program('ip'), ['link', 'add', LINK, 'type', 'veth', 'peer', 'name', LINK, 'netns', String(holder.pid)]);
  run(from, program('ip'), ['addr', 'add', `${fromIp}/30`, 'dev', LINK]);
  run(from, program('ip'), ['link', 'set', LINK, 'up']);
  run(to, program('ip'), ['addr', 'add', `${toIp}/30`, 'dev', LINK]);
  run(to, program('ip'), ['link', 'set', LINK, 'up']);
  for (const r of o.routes) run(from, program('ip'), ['route', 'add', r, 'via', toIp, 'dev', LINK]);
  run(to, program('ip'), ['route', 'add', o.fromPodCidr, 'via', fromIp, 'dev', LINK]);
  return { fromIp, toIp };
}
