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

export const conditionSchema = s.object(
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
