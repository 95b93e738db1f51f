/**
 * Pods of the platform, for people: a table of every Pod (what `kubectl get pods -A -o wide` shows) and, when a step
 * fails, each Pod of the step with its status and the tail of its containers' logs from the node.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kube, WireObject } from '../cluster/kube';
import type { Node } from '../node/node';

export async function listPods(kube: Kube, ns?: string, selector?: string): Promise<WireObject[]> {
  const path = `/api/v1/${ns ? `namespaces/${ns}/` : ''}pods${selector ? `?labelSelector=${encodeURIComponent(selector)}` : ''}`;
  const r = await kube.request('GET', path);
  if (r.code !== 200) throw new Error(`GET ${path}: ${r.code} ${JSON.stringify(r.body?.message ?? r.body)}`);
  return (r.body.items ?? []) as WireObject[];
}

const ready = (p: WireObject) => (p.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');

/** `NAMESPACE NAME READY STATUS RESTARTS IMAGE` of every Pod, one line each. */
export function podTable(pods: readonly WireObject[]): string {
  const rows = [['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'IMAGE']];
  for (const p of pods) {
    const cs = (p.status?.containerStatuses ?? []) as WireObject[];
    rows.push([
      p.metadata.namespace,
      p.metadata.name,
      `${cs.filter((c) => c.ready).length}/${p.spec.containers.length}`,
      p.metadata.deletionTimestamp ? 'Terminating' : (p.status?.phase ?? 'Unknown'),
      String(cs.reduce((n, c) => n + (c.restartCount ?? 0), 0)),
      p.spec.containers.map((c: WireObject) => c.image).join(','),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The last lines of every container log of a Pod on the node (the kubelet's files: they outlive a crashed container). */
export function podLogTail(node: Pick<Node, 'podLogs'>, ns: string, pod: string, lines = 20): string {
  const dir = node.podLogs(ns, pod);
  if (!existsSync(dir)) return `  (no logs at ${dir})`;
  const out: string[] = [];
  for (const c of readdirSync(dir)) {
    for (const f of readdirSync(join(dir, c)).sort()) {
      const text = readFileSync(join(dir, c, f), 'utf8')
        .trimEnd()
        .split('\n')
        .slice(-lines)
        .join('\n');
      out.push(`  ${join(dir, c, f)}:\n${text}`);
    }
  }
  return out.join('\n');
}

/** Every Pod matching `selector` in `ns`, its status and log tail: what a failing step reports. */
export async function podFailure(kube: Kube, node: Pick<Node, 'podLogs'>, ns: string, selector: string): Promise<string> {
  const pods = await listPods(kube, ns, selector).catch(() => []);
  if (pods.length === 0) return `no Pod in ${ns} matches ${selector}\n`;
  return pods
    .map(
      (p) =>
        `Pod ${ns}/${p.metadata.name} (${ready(p) ? 'Ready' : 'not Ready'}): ${JSON.stringify({
          phase: p.status?.phase,
          conditions: p.status?.conditions,
          containers: [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].map((c: WireObject) => ({
            name: c.name,
            state: c.state,
            lastState: c.lastState,
          })),
        })}\n${podLogTail(node, ns, p.metadata.name)}\n`,
    )
    .join('');
}
