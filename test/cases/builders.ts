/** Small builders for the cases every plan-based service shares: the transition rules in both directions. */
import type { Backend } from '../../recipe';
import type { CreateCase, UpdateCase } from './types';

export interface TransitionPlans {
  readonly service: string;
  /** Another version of the same backend, to prove the service is immutable. */
  readonly otherService?: string;
  readonly backend?: Backend;
  /** A smaller and a larger plan of the same topology and ssl. */
  readonly small: string;
  readonly big: string;
  /** A replica/cluster plan and a single plan of at least its size (for "no replica/cluster → single"). */
  readonly multi?: string;
  readonly singleAsBig?: string;
  /** A plan like `small` with the other ssl part (for "ssl unchanged"). */
  readonly otherSsl?: string;
  /** A plan smaller than `small` (Klutch checks downsizing to nano in a rule of its own). */
  readonly smaller?: string;
  /** A plan like `small` in a variant (`-bionic`), for "variant unchanged". */
  readonly variant?: string;
  /** Plans never move from single to replica/cluster either. */
  readonly fixedTopology?: boolean;
  /** The plan can never change. */
  readonly planImmutable?: boolean;
}

/** Update cases for the generated transition rules, each allowed and forbidden. */
export function transitionCases(p: TransitionPlans): UpdateCase[] {
  const base = (plan: string) => ({ service: p.service, plan });
  const out: UpdateCase[] = [];
  const add = (name: string, reason: string, from: string, patch: Record<string, unknown>, valid: boolean, error?: string) =>
    out.push({ name, reason, backend: p.backend, spec: base(from), patch, valid, ...(error ? { error } : {}) });
  if (p.otherService) {
    add('service change', 'service is immutable', p.small, { service: p.otherService }, false, 'The service cannot be changed');
  }
  if (p.planImmutable) {
    add('plan change', 'the plan is immutable', p.small, { plan: p.big }, false, 'The plan cannot be changed');
    add('plan kept', 'keeping the plan passes the immutability rule', p.small, { plan: p.small }, true);
    return out;
  }
  add('upsize', 'moving to a larger plan is allowed', p.small, { plan: p.big }, true);
  add('downsize', 'no plan downsizing', p.big, { plan: p.small }, false, 'Plan downsizing is not supported');
  if (p.smaller)
    add('downsize to the smallest', 'no plan downsizing', p.small, { plan: p.smaller }, false, 'Plan downsizing is not supported');
  if (p.multi && p.singleAsBig) {
    if (p.fixedTopology)
      add(
        'single to multi',
        'a single plan stays single',
        p.small,
        { plan: p.multi },
        false,
        'A single plan cannot be changed to a replica',
      );
    else add('single to multi', 'a single plan may become replica/cluster', p.small, { plan: p.multi }, true);
    add('multi to single', 'no replica/cluster → single', p.multi, { plan: p.singleAsBig }, false, 'cannot be changed to a single plan');
  }
  if (p.otherSsl) {
    add('ssl toggled', 'the ssl part is unchanged', p.small, { plan: p.otherSsl }, false, 'The ssl part of the plan cannot be changed');
  }
  if (p.variant)
    add('variant toggled', 'the variant is unchanged', p.small, { plan: p.variant }, false, 'part of the plan cannot be changed');
  return out;
}

/** Create cases every instance API shares: schema errors a user typically makes. */
export function commonCreateCases(
  valid: { service: string; plan: string; backend?: Backend },
  param: { name: string; wrongType: unknown },
): CreateCase[] {
  const b = valid.backend;
  return [
    {
      name: 'minimal',
      reason: 'service and plan are all a claim needs',
      backend: b,
      spec: { service: valid.service, plan: valid.plan },
      valid: true,
    },
    { name: 'no plan', reason: 'plan is required', backend: b, spec: { service: valid.service }, valid: false, error: 'spec.plan' },
    { name: 'no service', reason: 'service is required', backend: b, spec: { plan: valid.plan }, valid: false, error: 'spec.service' },
    {
      name: 'unknown service',
      reason: 'service is an enum',
      backend: b,
      spec: { service: 'a9s-unknown1', plan: valid.plan },
      valid: false,
      error: 'spec.service',
    },
    {
      name: 'unknown plan',
      reason: 'plan is an enum',
      backend: b,
      spec: { service: valid.service, plan: 'no-such-plan' },
      valid: false,
      error: 'spec.plan',
    },
    {
      name: 'unknown parameter',
      reason: 'unknown fields are rejected',
      backend: b,
      spec: { ...valid, backend: undefined, parameters: { noSuchParameter: 1 } },
      valid: false,
      error: 'noSuchParameter',
    },
    {
      name: 'unknown spec field',
      reason: 'unknown fields are rejected',
      backend: b,
      spec: { service: valid.service, plan: valid.plan, sise: 'big' },
      valid: false,
      error: 'sise',
    },
    {
      name: 'wrong type',
      reason: `${param.name} has a type`,
      backend: b,
      spec: { service: valid.service, plan: valid.plan, parameters: { [param.name]: param.wrongType } },
      valid: false,
      error: param.name,
    },
  ].map((c) => ({ ...c, spec: Object.fromEntries(Object.entries(c.spec).filter(([k, v]) => k !== 'backend' && v !== undefined)) }));
}
