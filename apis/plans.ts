/**
 * Service plans as data, and the CEL rules Klutch writes by hand for every service, generated from them:
 * no downsizing, no replica/cluster → single (and, for some services, no single → replica/cluster), the ssl part and the
 * variant unchanged, plan immutable.
 */
import { celList, celString } from '../lib/cel';
import type { ValidationRule } from '../lib/schema';

export { celList, celString };

/** How a plan's nodes are arranged. `single` is one node; `replica` and `cluster` are several. */
export type Topology = 'single' | 'replica' | 'cluster';
const TOPOLOGIES: readonly Topology[] = ['single', 'replica', 'cluster'];

export interface Plan {
  /** The plan's name as the backend knows it (`postgresql-replica-small-ssl`). */
  readonly name: string;
  readonly topology: Topology;
  /** One of the service's `sizes`. */
  readonly size: string;
  readonly ssl: boolean;
  /** Service versions this plan works with. @default every version of the backend */
  readonly services?: readonly string[];
  /** A variant of the plan (`bionic`, another OS image): a plan never moves into or out of a variant. */
  readonly variant?: string;
}

export interface PlanMatrixOptions {
  /** Plan names start with this (`postgresql` → `postgresql-single-nano`). */
  readonly prefix: string;
  /** The sizes offered per topology. */
  readonly topologies: Partial<Record<Topology, readonly string[]>>;
  /** `both`: each plan with and without `-ssl`; `only`: just `-ssl`; `none`: just without. */
  readonly ssl: 'both' | 'only' | 'none';
  /** A variant suffix appended after `-ssl` (`-bionic`), and the service versions the variant is limited to. */
  readonly variant?: { readonly suffix: string; readonly services: readonly string[] };
}

/** Plans named `<prefix>-<topology>-<size>[-ssl][<variant>]`, the naming every a9s service uses. */
export function planMatrix(o: PlanMatrixOptions): Plan[] {
  const out: Plan[] = [];
  for (const topology of TOPOLOGIES) {
    for (const size of o.topologies[topology] ?? []) {
      const ssls = o.ssl === 'both' ? [false, true] : [o.ssl === 'only'];
      for (const ssl of ssls) {
        const name = `${o.prefix}-${topology}-${size}${ssl ? '-ssl' : ''}`;
        out.push({ name, topology, size, ssl });
        if (o.variant) {
          const variant = o.variant.suffix.replace(/^-/, '');
          out.push({ name: `${name}${o.variant.suffix}`, topology, size, ssl, services: o.variant.services, variant });
        }
      }
    }
  }
  return out;
}

/**
 * Transition rules for the `plan` field (where `self` is the plan name), generated from the plan table.
 * Each rule is only emitted when the table makes it meaningful (no ssl rule for an ssl-only service).
 */
export function planTransitionRules(
  plans: readonly Plan[],
  sizes: readonly string[],
  opts: { immutable?: boolean; fixedTopology?: boolean } = {},
): ValidationRule[] {
  if (opts.immutable)
    return [{ rule: 'self == oldSelf', message: 'The plan cannot be changed: create a new instance with the other plan' }];
  const rules: ValidationRule[] = [];
  const bySize = new Map<number, string[]>();
  for (const p of plans) {
    const rank = sizes.indexOf(p.size);
    bySize.set(rank, [...(bySize.get(rank) ?? []), p.name]);
  }
  if (bySize.size > 1) {
    const ranks = [...bySize.keys()].sort((a, b) => a - b);
    const rank = `{${ranks.flatMap((r) => (bySize.get(r) ?? []).map((n) => `${celString(n)}: ${r}`)).join(', ')}}`;
    rules.push({
      rule: `${rank}[self] >= ${rank}[oldSelf]`,
      message: `Plan downsizing is not supported: choose a plan of the same or a larger size (sizes in order: ${sizes.join(' < ')})`,
    });
  }
  const multi = plans.filter((p) => p.topology !== 'single').map((p) => p.name);
  const single = plans.filter((p) => p.topology === 'single').map((p) => p.name);
  if (multi.length > 0 && single.length > 0) {
    rules.push({
      rule: `!(oldSelf in ${celList(multi)}) || !(self in ${celList(single)})`,
      message: 'A replica or cluster plan cannot be changed to a single plan',
    });
    if (opts.fixedTopology) {
      rules.push({
        rule: `!(oldSelf in ${celList(single)}) || !(self in ${celList(multi)})`,
        message: 'A single plan cannot be changed to a replica or cluster plan',
      });
    }
  }
  const ssl = plans.filter((p) => p.ssl).map((p) => p.name);
  if (ssl.length > 0 && ssl.length < plans.length) {
    rules.push({
      rule: `(self in ${celList(ssl)}) == (oldSelf in ${celList(ssl)})`,
      message: 'The ssl part of the plan cannot be changed: keep "-ssl" as it is',
    });
  }
  for (const variant of new Set(plans.flatMap((p) => (p.variant ? [p.variant] : [])))) {
    const names = celList(plans.filter((p) => p.variant === variant).map((p) => p.name));
    rules.push({
      rule: `(self in ${names}) == (oldSelf in ${names})`,
      message: `The ${variant} part of the plan cannot be changed: keep "-${variant}" as it is`,
    });
  }
  return rules;
}
