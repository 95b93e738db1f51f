/**
 * Conditions as kube-bind writes them: a transition time that moves only when the status changes, a severity only on
 * False, and the summary `Ready` that is True only when every other listed condition is.
 */
import type { Condition, ConditionSeverity } from '../exports/bind-api';

export interface ConditionInput<Type extends string = string> {
  readonly type: Type;
  readonly status: boolean | 'Unknown';
  readonly reason: string;
  readonly message?: string;
  /** Only when status is false. @default Error */
  readonly severity?: ConditionSeverity;
}

/** `conditions` with `c` set; the transition time of an unchanged status is kept. Sorted by type, so writes are stable. */
export function setCondition(conditions: readonly Condition[] | undefined, c: ConditionInput, now: Date): Condition[] {
  const status = c.status === 'Unknown' ? 'Unknown' : c.status ? 'True' : 'False';
  const old = conditions?.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status,
    lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    reason: c.reason,
    ...(c.message ? { message: c.message } : {}),
    ...(status === 'False' ? { severity: c.severity ?? 'Error' } : {}),
  };
  return [...(conditions ?? []).filter((x) => x.type !== c.type), next].sort((a, b) => a.type.localeCompare(b.type));
}

/** Sets several conditions and a summary of them: True when all are True, else the first that is not, by `order`. */
export function withSummary(
  conditions: readonly Condition[] | undefined,
  inputs: readonly ConditionInput[],
  summaryType: string,
  now: Date,
): Condition[] {
  let out = [...(conditions ?? [])];
  for (const c of inputs) out = setCondition(out, c, now);
  const failing = inputs.find((c) => c.status !== true);
  return setCondition(
    out,
    failing
      ? { type: summaryType, status: failing.status, reason: failing.reason, message: failing.message, severity: failing.severity }
      : { type: summaryType, status: true, reason: 'AllConditionsTrue' },
    now,
  );
}

export const conditionOf = (conditions: readonly Condition[] | undefined, type: string): Condition | undefined =>
  conditions?.find((c) => c.type === type);
