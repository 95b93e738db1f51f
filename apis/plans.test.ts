import { describe, expect, it } from 'vitest';
import { planMatrix, planTransitionRules } from './plans';

describe('planMatrix', () => {
  it('names plans <prefix>-<topology>-<size>[-ssl][variant]', () => {
    const plans = planMatrix({
      prefix: 'pg',
      topologies: { single: ['nano'], replica: ['big'] },
      ssl: 'both',
      variant: { suffix: '-bionic', services: ['v13'] },
    });
    expect(plans.map((p) => p.name)).toEqual([
      'pg-single-nano',
      'pg-single-nano-bionic',
      'pg-single-nano-ssl',
      'pg-single-nano-ssl-bionic',
      'pg-replica-big',
      'pg-replica-big-bionic',
      'pg-replica-big-ssl',
      'pg-replica-big-ssl-bionic',
    ]);
    expect(plans.find((p) => p.name === 'pg-replica-big-ssl-bionic')).toEqual({
      name: 'pg-replica-big-ssl-bionic',
      topology: 'replica',
      size: 'big',
      ssl: true,
      services: ['v13'],
      variant: 'bionic',
    });
  });
});

describe('planTransitionRules', () => {
  const plans = planMatrix({ prefix: 'x', topologies: { single: ['s', 'b'], cluster: ['b'] }, ssl: 'both' });

  it('generates no downsizing, no cluster → single, and ssl unchanged from the table', () => {
    const rules = planTransitionRules(plans, ['s', 'b']);
    expect(rules.map((r) => r.message)).toEqual([
      'Plan downsizing is not supported: choose a plan of the same or a larger size (sizes in order: s < b)',
      'A replica or cluster plan cannot be changed to a single plan',
      'The ssl part of the plan cannot be changed: keep "-ssl" as it is',
    ]);
    expect(rules[0]?.rule).toBe(
      "{'x-single-s': 0, 'x-single-s-ssl': 0, 'x-single-b': 1, 'x-single-b-ssl': 1, 'x-cluster-b': 1, 'x-cluster-b-ssl': 1}[self] >= {'x-single-s': 0, 'x-single-s-ssl': 0, 'x-single-b': 1, 'x-single-b-ssl': 1, 'x-cluster-b': 1, 'x-cluster-b-ssl': 1}[oldSelf]",
    );
  });

  it('leaves out rules the table cannot break', () => {
    const sslOnlySingle = planMatrix({ prefix: 'y', topologies: { single: ['s'] }, ssl: 'only' });
    expect(planTransitionRules(sslOnlySingle, ['s'])).toEqual([]);
  });

  it('keeps the topology fixed in both directions, and a variant unchanged, when the table asks for it', () => {
    const pg = planMatrix({
      prefix: 'pg',
      topologies: { single: ['s'], replica: ['s'] },
      ssl: 'none',
      variant: { suffix: '-bionic', services: ['v13'] },
    });
    const rules = planTransitionRules(pg, ['s'], { fixedTopology: true });
    expect(rules.map((r) => r.message)).toEqual([
      'A replica or cluster plan cannot be changed to a single plan',
      'A single plan cannot be changed to a replica or cluster plan',
      'The bionic part of the plan cannot be changed: keep "-bionic" as it is',
    ]);
    expect(rules[2]?.rule).toBe(
      "(self in ['pg-single-s-bionic', 'pg-replica-s-bionic']) == (oldSelf in ['pg-single-s-bionic', 'pg-replica-s-bionic'])",
    );
  });

  it('makes the plan immutable when asked', () => {
    expect(planTransitionRules(plans, ['s', 'b'], { immutable: true })).toEqual([
      { rule: 'self == oldSelf', message: 'The plan cannot be changed: create a new instance with the other plan' },
    ]);
  });
});
