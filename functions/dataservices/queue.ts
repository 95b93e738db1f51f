/**
 * What the resource waits behind (`Recipe.queue`): CloudNativePG takes one backup of a Cluster at a time, the oldest
 * waiting one first, and a Backup behind another only says `pending` (its log: "A backup is already in progress or
 * waiting to be started"). The function asks Crossplane for the queue's objects as extra resources, as for
 * diagnostics (diagnostics.ts: the composite's namespace, every object checked again for it and its labels), and
 * names the one ahead. Pure: no SDK calls, no I/O.
 */
import type { Queue } from '../../recipe';
import { get } from '../../lib/fieldpath';
import { QUEUED } from '../../lib/claim-hold';
import { diagnosticsSelector, foundFor, type DiagnosticsSelector, type Said } from './diagnostics';

type Obj = Record<string, unknown>;

/** The key of the requirement in the response, and of what Crossplane found in the next request. */
export const QUEUE_REQUIREMENT = 'queue';

/** The selector of the queue's objects; undefined when the composite has no claim to speak for. */
export const queueSelector = (q: Queue, composite: Obj, where: string): DiagnosticsSelector | undefined =>
  diagnosticsSelector(q, composite, where, 'queue');

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const phaseOf = (q: Queue, o: Obj): string => str(get(o, q.phaseAt));
/** The backend's order: the oldest first, by name where made in the same second. */
const byAge = (a: Obj, b: Obj): number =>
  str(get(a, 'metadata.creationTimestamp')).localeCompare(str(get(b, 'metadata.creationTimestamp'))) ||
  str(get(a, 'metadata.name')).localeCompare(str(get(b, 'metadata.name')));

/** Whether the resource (`own`, as observed in its composed resource) is made and neither runs nor is done. */
export function waitsItsTurn(q: Queue, own: unknown): own is Obj {
  if (typeof own !== 'object' || own === null || !str(get(own as Obj, 'metadata.name'))) return false;
  const phase = phaseOf(q, own as Obj);
  return !q.running.includes(phase) && !q.done.includes(phase);
}

/**
 * The object the resource (`own`, as observed in its composed resource) waits behind, if any: one that runs, else
 * the oldest that waits when that is not the resource itself. Nothing unless it waits its turn (waitsItsTurn).
 */
export function queuedBehind(q: Queue, own: unknown, selector: DiagnosticsSelector, found: readonly Obj[] | undefined): Said | undefined {
  if (!waitsItsTurn(q, own)) return undefined;
  const name = str(get(own, 'metadata.name'));
  const others = foundFor(selector, found).filter((o) => get(o, 'metadata.name') !== name);
  const running = others.filter((o) => q.running.includes(phaseOf(q, o))).sort(byAge)[0];
  if (running) {
    const since = q.startedAt ? str(get(running, q.startedAt)) : '';
    return {
      reason: QUEUED,
      text: `waits for ${q.kind} ${str(get(running, 'metadata.name'))}, ${phaseOf(q, running)}${since ? ` since ${since}` : ''}: ${q.says}`,
    };
  }
  const first = [...others, own].filter((o) => !q.done.includes(phaseOf(q, o))).sort(byAge)[0];
  if (first && first !== own)
    return {
      reason: QUEUED,
      text: `waits for ${q.kind} ${str(get(first, 'metadata.name'))}, made before it and not started yet: ${q.says}`,
    };
  return undefined;
}
