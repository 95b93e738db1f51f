import { describe, expect, it } from 'vitest';
import { DataService, type DataServiceProps } from './dataservice';
import { planMatrix } from './plans';
import { s } from '../lib/schema';

/** A small valid service on both backends; each case breaks one thing. */
function props(over: Partial<DataServiceProps> = {}): DataServiceProps {
  return {
    name: 'demo',
    kind: 'DemoInstance',
    defaultBackend: 'a9s',
    sizes: ['small', 'big'],
    a9s: {
      services: ['a9s-demo1', 'a9s-demo2'],
      plans: planMatrix({ prefix: 'demo', topologies: { single: ['small', 'big'], replica: ['big'] }, ssl: 'both' }),
    },
    a8s: {
      services: ['a9s-demo1'],
      plans: planMatrix({ prefix: 'demo', topologies: { single: ['small'] }, ssl: 'none' }),
      resource: { apiVersion: 'demo.anynines.com/v1', kind: 'Demo' },
      versionPrefix: 'a9s-demo',
      sizes: { small: { volumeSize: '1Gi', cpu: '1', memory: '1Gi' } },
      replicas: { single: 1 },
    },
    parameters: [{ name: 'maxConnections', schema: s.integer({ minimum: 1 }), keys: { a9s: 'max_connections', a8s: 'maxConnections' } }],
    ...over,
  };
}

describe('DataService', () => {
  it('refuses a parameter with the compositions of backends that do not offer it, and defaults a spec field per backend', () => {
    const d = new DataService(
      props({
        parameters: [{ name: 'workMem', schema: s.string(), keys: { a9s: 'work_mem' }, backends: ['a9s'] }],
        fields: [{ name: 'expose', schema: s.string(), to: { a8s: 'spec.expose' }, defaults: { a8s: 'LoadBalancer' } }],
      }),
    );
    expect(d.api.rules('v1')).toContainEqual({
      rule: "!has(self.parameters) || !has(self.parameters.workMem) || (has(self.compositionRef) ? self.compositionRef.name : 'a9s-demo') in ['a9s-demo']",
      message: 'The parameter workMem is only offered by the a9s-demo composition',
    });
    expect(d.api.backends.a8s?.fields).toContainEqual({ from: 'spec.expose', to: 'spec.expose', default: 'LoadBalancer' });
  });

  it('accepts a valid definition and derives its API', () => {
    const d = new DataService(props());
    expect(d.api.kind).toBe('DemoInstance');
    expect(d.api.plural).toBe('demoinstances');
    expect(d.api.backendNames).toEqual(['a9s', 'a8s']);
    expect(d.api.compositionName('a8s')).toBe('a8s-demo');
  });

  it.each<[string, Partial<DataServiceProps>, string[]]>([
    ['an invalid name', { name: 'Demo_1' }, ['data service "Demo_1"', 'name:', 'is not a DNS label', 'lower-case letters']],
    ['an invalid kind', { kind: 'demo-instance' }, ['kind:', 'is not a Kubernetes kind', 'UpperCamelCase']],
    [
      'an unknown size',
      { a9s: { services: ['a9s-demo1'], plans: [{ name: 'demo-single-huge', topology: 'single', size: 'huge', ssl: false }] } },
      ['a9s.plans["demo-single-huge"].size', '"huge" is not one of the service\'s sizes [small, big]', 'add the size to sizes'],
    ],
    [
      'a duplicate plan',
      {
        a9s: {
          services: ['a9s-demo1'],
          plans: [
            { name: 'demo-x', topology: 'single', size: 'small', ssl: false },
            { name: 'demo-x', topology: 'single', size: 'small', ssl: false },
          ],
        },
      },
      ['a9s.plans["demo-x"]', 'is listed twice', 'list each plan once'],
    ],
    [
      'a parameter without a key for an offered backend',
      { parameters: [{ name: 'workMem', schema: s.string(), keys: { a9s: 'work_mem' } }] },
      ['parameters["workMem"].keys.a8s', 'the a8s backend offers the parameter', 'set backends'],
    ],
    [
      'a parameter for a backend the service lacks',
      {
        a8s: undefined,
        parameters: [{ name: 'workMem', schema: s.string(), keys: { a9s: 'work_mem', a8s: 'workMem' }, backends: ['a8s'] }],
      },
      ['parameters["workMem"].backends', 'names "a8s"'],
    ],
    [
      'a duplicate parameter',
      {
        parameters: [
          { name: 'p', schema: s.string(), keys: { a9s: 'p', a8s: 'p' } },
          { name: 'p', schema: s.string(), keys: { a9s: 'p', a8s: 'p' } },
        ],
      },
      ['parameters["p"]', 'is defined twice'],
    ],
    ['a default backend with no offering', { defaultBackend: 'a8s', a8s: undefined }, ['defaultBackend', '"a8s" offers nothing']],
    [
      'an a8s size missing',
      { a8s: { ...props().a8s!, sizes: {} } },
      ['a8s.sizes.small', 'is missing (plan "demo-single-small" uses it)', 'add volumeSize, cpu and memory'],
    ],
    [
      'an a8s topology without replicas',
      { a8s: { ...props().a8s!, plans: planMatrix({ prefix: 'demo', topologies: { replica: ['small'] }, ssl: 'none' }) } },
      ['a8s.replicas.replica', 'add the number of replicas'],
    ],
    [
      'a version prefix that leaves no number',
      { a8s: { ...props().a8s!, versionPrefix: 'a9s-' } },
      ['a8s.versionPrefix', 'does not leave a number'],
    ],
    [
      'a plan limited to an unknown version',
      {
        a9s: {
          services: ['a9s-demo1'],
          plans: [{ name: 'demo-x', topology: 'single', size: 'small', ssl: false, services: ['a9s-demo9'] }],
        },
      },
      ['a9s.plans["demo-x"].services', '"a9s-demo9" is not a a9s service version'],
    ],
    [
      'a plan that means different things per backend',
      {
        a8s: {
          ...props().a8s!,
          plans: [{ name: 'demo-single-small', topology: 'single', size: 'big', ssl: false }],
          sizes: { big: { volumeSize: '1Gi', cpu: '1', memory: '1Gi' } },
        },
      },
      ['a8s.plans["demo-single-small"]', 'differs from the a9s plan of the same name'],
    ],
    [
      'an ssl-only version that does not exist',
      { sslOnlyServices: ['a9s-demo7'] },
      ['sslOnlyServices', '"a9s-demo7" is not a service version'],
    ],
    [
      'a field shadowing service',
      { fields: [{ name: 'service', schema: s.string(), to: {} }] },
      ['fields["service"]', 'shadows a built-in field'],
    ],
    [
      'a kind ending in s without a plural',
      { kind: 'Postgres' },
      ['data service "demo": plural: kind "Postgres" ends in "s"', 'set plural'],
    ],
  ])('refuses %s, naming the service, the field and the fix', (_, over, parts) => {
    let message = '';
    try {
      new DataService(props(over));
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).not.toBe('');
    for (const p of parts) expect(message).toContain(p);
  });
});

describe('the resource name (plural) of its kind', () => {
  it.each([
    ['DemoInstance', undefined, 'demoinstances', 'xdemoinstances'],
    ['Policy', undefined, 'policies', 'xpolicies'],
    ['Postgres', 'postgres', 'postgres', 'xpostgres'],
  ])('%s (plural %s) is %s, its v1 composite %s', (kind, plural, want, composite) => {
    const api = new DataService(props({ kind, ...(plural ? { plural } : {}) })).api;
    expect([api.plural, api.compositePlural('v1')]).toEqual([want, composite]);
  });
});

describe('the XRD spec it generates', () => {
  const api = new DataService(
    props({
      parameters: [
        {
          name: 'maxConnections',
          schema: s.integer({ minimum: 1 }),
          keys: { a9s: 'max_connections', a8s: { key: 'maxConnections', lowercase: true } },
        },
        { name: 'lag', schema: s.integer(), keys: { a9s: 'lag' }, backends: ['a9s'], topologies: ['replica'] },
      ],
    }),
  ).api;

  it('enumerates every service and plan of every backend, and requires both', () => {
    const spec = api.spec.toJSON();
    expect(spec.required).toEqual(['service', 'plan']);
    expect(spec.properties?.service?.enum).toEqual(['a9s-demo1', 'a9s-demo2']);
    expect(spec.properties?.plan?.enum).toContain('demo-replica-big-ssl');
    expect(spec.properties?.service?.['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'The service cannot be changed: create a new instance instead' },
    ]);
  });

  it('reads the effective composition, so defaultCompositionRef keeps working', () => {
    const rules = api.rules('v1').map((r) => r.rule);
    expect(rules).toContain(
      "(has(self.compositionRef) ? self.compositionRef.name : 'a9s-demo') != 'a8s-demo' || self.service in ['a9s-demo1']",
    );
    // v2: the same rules, on the backend a claim of either Klutch names: Crossplane's spec.crossplane.compositionRef
    // where it names a backend's composition (Klutch on Crossplane v2), else Klutch 1.x's spec.compositionRef.
    const v2 = api.rules('v2');
    const effective =
      "((has(self.crossplane) && has(self.crossplane.compositionRef) && !(self.crossplane.compositionRef.name in ['', 'demo'])) ? " +
      "self.crossplane.compositionRef.name : (has(self.compositionRef) ? self.compositionRef.name : 'a9s-demo'))";
    expect(v2.map((r) => r.rule)).toContain(`${effective} != 'a8s-demo' || self.service in ['a9s-demo1']`);
    expect(
      v2.slice(1).map((r) => r.rule.replaceAll(effective, "(has(self.compositionRef) ? self.compositionRef.name : 'a9s-demo')")),
    ).toEqual(api.rules('v1').map((r) => r.rule));
    // A claim may not name two backends, one in each place.
    expect(v2[0]!.message).toMatch(/^spec\.compositionRef\.name and spec\.crossplane\.compositionRef\.name name different backends/);
  });

  it('limits topology-bound parameters to their plans', () => {
    expect(api.rules('v1')).toContainEqual({
      rule: "!has(self.parameters) || !has(self.parameters.lag) || self.plan in ['demo-replica-big', 'demo-replica-big-ssl']",
      message: 'The parameter lag is only accepted with replica plans',
    });
  });

  it('maps parameters per backend and reports the ones a backend lacks', () => {
    expect(api.backends.a9s?.parameters).toEqual([
      { from: 'maxConnections', to: 'max_connections' },
      { from: 'lag', to: 'lag' },
    ]);
    expect(api.backends.a8s?.parameters).toEqual([{ from: 'maxConnections', to: 'maxConnections', transforms: [{ type: 'lowercase' }] }]);
    expect(api.backends.a8s?.ignoredParameters).toEqual(['lag']);
  });
});
