/** Conditions as kube-bind writes them: the transition time moves only when the status changes. */
import type { Condition } from '../../exports/bind-api';

export function setCondition(
  list: readonly Condition[] | undefined,
  c: Omit<Condition, 'lastTransitionTime'>,
  now = new Date(),
): Condition[] {
  const old = list?.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.status === 'False' ? { severity: c.severity ?? 'Error' } : {}),
    lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
  return [...(list ?? []).filter((x) => x.type !== c.type), next].sort((a, b) => a.type.localeCompare(b.type));
}

/**
 * Whether two condition lists say the same (ignoring the order of the list and of each condition's fields: the API
 * server hands conditions back with their keys sorted, so comparing JSON as written found every cached list changed
 * and rewrote it on every reconcile).
 */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  const norm = (l: readonly Condition[] | undefined) =>
    JSON.stringify(
      [...(l ?? [])]
        .sort((x, y) => x.type.localeCompare(y.type))
        .map((c) => [c.type, c.status, c.severity ?? '', c.lastTransitionTime, c.reason ?? '', c.message ?? '']),
    );
  return norm(a) === norm(b);
}
