import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { inputOf } from '../../harness/crossplane/function-requests';
import { fieldPathOf, validateInput } from './validate-input';

const apis: Api[] = await loadCatalog();
const good = (): Record<string, unknown> =>
  structuredClone(inputOf(apis.find((a) => a.name === 'postgresql') as Api, 'a8s')) as unknown as Record<string, unknown>;

describe('validateInput', () => {
  it.each(apis.flatMap((api) => api.backendNames.map((b) => [api.name, b, api] as const)))(
    'accepts the %s %s composition input',
    (_n, b, api) => {
      expect(validateInput(inputOf(api, b))).toMatchObject({ ok: true });
    },
  );

  it.each<{ name: string; change: (i: Record<string, any>) => void; want: string[] }>([
    {
      name: 'a misspelled top-level field',
      change: (i) => {
        i.parmetersTo = i.parametersTo;
      },
      want: ['parmetersTo: is not a field of the input'],
    },
    {
      name: 'a missing resource kind',
      change: (i) => {
        delete i.resource.kind;
      },
      want: ['resource.kind: is required'],
    },
    {
      name: 'a backend that is not a DNS label',
      change: (i) => {
        i.backend = 'A9S';
      },
      want: ['backend: must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"'],
    },
    {
      name: 'a field with from and value',
      change: (i) => {
        i.fields[0].value = 1;
      },
      want: ['fields[0]: set exactly one of from and value'],
    },
    {
      name: 'a field with neither from nor value',
      change: (i) => {
        delete i.fields[0].from;
      },
      want: ['fields[0]: set exactly one of from and value'],
    },
    {
      name: 'a trimPrefix without prefix',
      change: (i) => {
        delete i.fields[0].transforms[0].prefix;
      },
      want: ['fields[0].transforms[0]: a trimPrefix transform needs prefix'],
    },
    {
      name: 'an unknown transform',
      change: (i) => {
        i.fields[0].transforms[1].type = 'toInt';
      },
      want: ['fields[0].transforms[1].type: must be one of "trimPrefix", "toInteger", "lowercase", "format", "map"'],
    },
    {
      name: 'a providerConfig with name and fromFieldPath',
      change: (i) => {
        i.providerConfig.fromFieldPath = 'spec.x';
      },
      want: ['providerConfig: set exactly one of name and fromFieldPath'],
    },
    {
      name: 'a parameter without to',
      change: (i) => {
        delete i.parameters[0].to;
      },
      want: ['parameters[0].to: is required'],
    },
    {
      name: 'an empty field path',
      change: (i) => {
        i.parametersTo = '';
      },
      want: ['parametersTo: must NOT have fewer than 1 characters'],
    },
    {
      name: 'a plan table without plans',
      change: (i) => {
        delete i.planTable.plans;
      },
      want: ['planTable.plans: is required'],
    },
  ])('names the field of $name', ({ change, want }) => {
    const i = good();
    change(i);
    expect(validateInput(i)).toEqual({ ok: false, errors: want });
  });

  it('ignores metadata on the input', () => {
    expect(validateInput({ ...good(), metadata: { name: 'x' } })).toMatchObject({ ok: true });
    expect(validateInput({ ...good(), metadata: 'x' })).toEqual({ ok: false, errors: ['metadata: must be object'] });
  });

  it.each([null, 'text', 42, []])('refuses %j as input', (v) => {
    expect(validateInput(v)).toMatchObject({ ok: false, errors: [expect.stringContaining('no input object')] });
  });
});

it.each([
  ['', ''],
  ['/fields/0/from', 'fields[0].from'],
  ['/planTable/plans/a.b', 'planTable.plans[a.b]'],
])('fieldPathOf(%j) = %j', (p, want) => expect(fieldPathOf(p)).toBe(want));
