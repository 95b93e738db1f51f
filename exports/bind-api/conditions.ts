/**
 * Conditions as kube-bind writes them (its own conditions API, with severity), shared by every bind kind's status.
 */
import { s } from '../../lib/schema';

export type ConditionStatus = 'True' | 'False' | 'Unknown';
/** Set only when status is False; empty otherwise. */
export type ConditionSeverity = 'Error' | 'Warning' | 'Info' | '';

export interface Condition<Type extends string = string> {
  type: Type;
  status: ConditionStatus;
  severity?: ConditionSeverity;
  /** RFC 3339 time. */
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

/** The summary condition every bind kind carries and printer columns show. */
export const READY_CONDITION = 'Ready';

const conditionSchema = s.object(
  {
    lastTransitionTime: s.string({ description: 'When the status last changed.', format: 'date-time' }),
    message: s.string({ description: 'Human-readable details.' }),
    reason: s.string({ description: 'CamelCase reason of the last transition.' }),
    severity: s.string({ description: 'Error, Warning or Info; only when status is False.' }),
    status: s.string({ description: 'True, False or Unknown.' }),
    type: s.string({ description: 'CamelCase condition type.' }),
  },
  { description: 'An observation of the object.', required: ['lastTransitionTime', 'status', 'type'] },
);

export const conditionsSchema = s.array(conditionSchema, { description: 'Observations of the object.' });

/**
 * A condition to set: its transition time is decided by `setCondition`. Severity only counts when status is False.
 */
export type ConditionInput<Type extends string = string> = Omit<Condition<Type>, 'lastTransitionTime'>;

const rfc3339 = (now: Date) => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * `list` with `c` set, as kube-bind writes conditions: the transition time moves only when the status changes, a
 * severity only on False (Error unless given). Sorted by type, so the same conditions are written the same way.
 */
export function setCondition(list: readonly Condition[] | undefined, c: ConditionInput, now = new Date()): Condition[] {
  const old = list?.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.status === 'False' ? { severity: c.severity || 'Error' } : {}),
    lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : rfc3339(now),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
  return [...(list ?? []).filter((x) => x.type !== c.type), next].sort((a, b) => a.type.localeCompare(b.type));
}

/**
 * Sets several conditions and the summary `summaryType` of them: True when all are True, else the first that is not
 * (in the order given), with its status, reason, message and severity.
 */
export function withSummary(
  list: readonly Condition[] | undefined,
  inputs: readonly ConditionInput[],
  summaryType: string = READY_CONDITION,
  now = new Date(),
): Condition[] {
  let out = [...(list ?? [])];
  for (const c of inputs) out = setCondition(out, c, now);
  const failing = inputs.find((c) => c.status !== 'True');
  return setCondition(
    out,
    failing ? { ...failing, type: summaryType } : { type: summaryType, status: 'True', reason: 'AllConditionsTrue' },
    now,
  );
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

/** The condition of a type, if listed. */
export const conditionOf = (list: readonly Condition[] | undefined, type: string): Condition | undefined =>
  list?.find((c) => c.type === type);
