import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { ComposeError, composeResource, EXPIRES_AT_ANNOTATION } from './compose';
import { stringify } from 'yaml';
import { get, join, set } from '../../lib/fieldpath';
import { SETTINGS, allParameters, compositeOf, inputOf } from '../../harness/crossplane/function-requests';
import { A8S_BINDING_SECRET } from '../../backends';
import { inputFor, type Backend, type Recipe } from '../../recipe';

const apis: Api[] = await loadCatalog();
const api = (name: string): Api => apis.find((a) => a.name === name) as Api;
const claimLabels = { 'crossplane.io/claim-name': 'my-claim', 'crossplane.io/claim-namespace': 'team-a' };

describe('composeResource: exact resources', () => {
  it('a9s PostgreSQL: the ServiceInstance MR with broker parameter keys', () => {
    const xr = compositeOf(api('postgresql'), 'a9s', {
      service: 'a9s-postgresql15',
      plan: 'postgresql-single-small',
      parameters: { maxConnections: 200, logMinMessages: 'DEBUG1', rolePrivileges: ['CREATEDB'], trackIoTiming: 'on' },
    });
    expect(composeResource(inputOf(api('postgresql'), 'a9s'), xr)).toEqual({
      name: 'a9s-postgresql',
      warnings: [],
      resource: {
        apiVersion: 'dataservices.anynines.com/v1',
        kind: 'ServiceInstance',
        metadata: { labels: claimLabels },
        spec: {
          providerConfigRef: { name: 'postgresql-service-broker' },
          forProvider: {
            acceptsIncomplete: true,
            serviceName: 'a9s-postgresql15',
            planName: 'postgresql-single-small',
            organizationGuid: 'org-guid',
            spaceGuid: 'space-guid',
            parameters: { max_connections: 200, pg_log_min_messages: 'DEBUG1', role_privileges: ['CREATEDB'], track_io_timing: 'on' },
          },
        },
      },
    });
  });

  it('a8s PostgreSQL: an Object wrapping the Postgresql named like the claim, sized by the plan table', () => {
    const xr = compositeOf(api('postgresql'), 'a8s', {
      service: 'a9s-postgresql14',
      plan: 'postgresql-replica-small',
      expose: 'LoadBalancer',
      parameters: { tempFileLimit: 1024, logMinMessages: 'DEBUG1', maxWalSenders: 5, dataChecksums: true },
    });
    const got = composeResource(inputOf(api('postgresql'), 'a8s'), xr);
    expect(got.resource).toEqual({
      apiVersion: 'kubernetes.crossplane.io/v1alpha2',
      kind: 'Object',
      metadata: { labels: claimLabels },
      spec: {
        providerConfigRef: { name: 'kubernetes-provider' },
        // Ready only once the operator reports the cluster running (the Object's default is "created").
        readiness: {
          policy: 'DeriveFromCelQuery',
          celQuery: "has(object.status) && has(object.status.clusterStatus) && object.status.clusterStatus == 'Running'",
        },
        // Reconciled when the Postgresql changes (provider-kubernetes --enable-watches), not only on its poll.
        watch: true,
        forProvider: {
          manifest: {
            apiVersion: 'postgresql.anynines.com/v1beta3',
            kind: 'Postgresql',
            metadata: { name: 'my-claim', namespace: 'team-a' },
            spec: {
              version: 14,
              expose: 'LoadBalancer',
              replicas: 3,
              volumeSize: '10Gi',
              resources: { requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } },
              parameters: { tempFileLimitKiloBytes: 1024, logMinMessages: 'debug1', maxWALSenders: 5 },
            },
          },
        },
      },
    });
    expect(got.warnings).toEqual([
      'parameter dataChecksums is not offered by the a8s backend of postgresql and was ignored (composition a8s-postgresql)',
    ]);
  });

  it('a9s ServiceBinding: ProviderConfig from the instance type, label, connection secret in the claim namespace', () => {
    const xr = compositeOf(api('servicebinding'), 'a9s', { instanceRef: 'pg-1', serviceInstanceType: 'postgresql' });
    expect(composeResource(inputOf(api('servicebinding'), 'a9s'), xr).resource).toEqual({
      apiVersion: 'dataservices.anynines.com/v1',
      kind: 'ServiceBinding',
      metadata: { labels: { ...claimLabels, 'klutch.io/instance-type': 'postgresql' } },
      spec: {
        providerConfigRef: { name: 'postgresql-service-broker' },
        forProvider: { instanceName: 'pg-1', acceptsIncomplete: true },
        writeConnectionSecretToRef: { name: 'my-claim-creds', namespace: 'team-a' },
      },
    });
  });

  it('a8s ServiceBinding: instance reference in the claim namespace', () => {
    const xr = compositeOf(api('servicebinding'), 'a8s', { instanceRef: 'pg-1', serviceInstanceType: 'postgresql' });
    const got = composeResource(inputOf(api('servicebinding'), 'a8s'), xr).resource;
    expect(get(got, 'spec.forProvider.manifest')).toEqual({
      apiVersion: 'servicebindings.anynines.com/v1beta3',
      kind: 'ServiceBinding',
      metadata: { name: 'my-claim', namespace: 'team-a' },
      spec: { instance: { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', name: 'pg-1', namespace: 'team-a' } },
    });
    expect(get(got, 'spec.writeConnectionSecretToRef')).toEqual({ name: 'my-claim-creds', namespace: 'team-a' });
    // Once the a8s binding reports its Secret, that is the Secret the Object publishes.
    const reported = composeResource(inputOf(api('servicebinding'), 'a8s'), xr, {
      status: { atProvider: { manifest: { status: { implemented: true, secret: { name: 'pg-1-creds-x9', namespace: 'team-a' } } } } },
    }).resource;
    expect((get(reported, 'spec.connectionDetails') as { name: string }[]).map((d) => d.name)).toEqual(Array(4).fill('pg-1-creds-x9'));
    // Until then, the Secret a8s writes beside the binding by convention is what the Object publishes into my-claim-creds.
    expect(get(got, 'spec.connectionDetails')).toEqual(
      ['database', 'instance_service', 'password', 'username'].map((key) => ({
        apiVersion: 'v1',
        kind: 'Secret',
        name: 'my-claim-service-binding',
        namespace: 'team-a',
        fieldPath: `data.${key}`,
        toConnectionSecretKey: key,
      })),
    );
  });
});

const cases = apis.flatMap((a) => a.backendNames.map((b) => ({ api: a.name, backend: b, a })));

/**
 * Golden files (testdata/compose/<backend>-<api>.yaml): for each API and backend, the example claim with every
 * parameter set, and the whole resource composed from it, reviewed in diffs. `npx vitest run -u` rewrites them
 * after an intended change.
 */
describe('composeResource: every API and backend, a claim with every parameter set', () => {
  it.each(cases)('$api on $backend', async ({ a, backend }) => {
    const params = allParameters(a);
    const spec = { ...(a.examples[backend] as Record<string, unknown>), ...(Object.keys(params).length ? { parameters: params } : {}) };
    const input = inputOf(a, backend);
    const got = composeResource(input, compositeOf(a, backend, spec));
    expect(got.name).toBe(`${backend}-${a.name}`);
    // A generated value is new on every run: the golden file says where it is and checks its shape.
    for (const g of input.generated ?? []) {
      const at = input.wrapper ? join(input.wrapper.manifestAt, g.to) : g.to;
      expect(get(got.resource, at)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      set(got.resource, at, '<generated: 32 random bytes, base64url>');
    }
    const doc = stringify({ claim: spec, composed: got.resource, warnings: got.warnings }, { sortMapEntries: true, lineWidth: 0 });
    await expect(`# composeResource(${backend}-${a.name}): the claim, the composed resource, the warnings\n${doc}`).toMatchFileSnapshot(
      `testdata/compose/${backend}-${a.name}.yaml`,
    );
  });
});

describe('the catalog maps every XRD parameter for each backend', () => {
  it.each(cases)('$api on $backend', ({ a, backend }) => {
    const xrd = Object.keys(a.spec.toJSON().properties?.parameters?.properties ?? {}).sort();
    const recipe = a.backends[backend];
    const mapped = (recipe?.parameters ?? []).map((p) => p.from.split('.')[0] as string);
    const ignored = [...(recipe?.ignoredParameters ?? [])];
    expect([...mapped, ...ignored].sort(), 'mapped + ignored = XRD parameters').toEqual(xrd);
    expect(
      mapped.filter((m) => ignored.includes(m)),
      'both mapped and ignored',
    ).toEqual([]);
    const targets = (recipe?.parameters ?? []).map((p) => p.to);
    expect(new Set(targets).size, 'two parameters on one key').toBe(targets.length);
  });
});

describe('composeResource: errors name the field and the composition', () => {
  const pg = api('postgresql');
  it.each<{ name: string; backend: Backend; spec: Record<string, unknown>; labels?: boolean; want: string }>([
    {
      name: 'a required field missing',
      backend: 'a9s',
      spec: { plan: 'postgresql-single-small' },
      want: 'cannot set fields[1] (spec.service → spec.forProvider.serviceName) (composition a9s-postgresql): composite field spec.service is required but not set',
    },
    {
      name: 'a plan missing from the plan table',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-huge' },
      want: 'cannot look up plan "postgresql-huge" in the plan table (composition a8s-postgresql): not one of',
    },
    {
      name: 'a service the transform cannot read',
      backend: 'a8s',
      spec: { service: 'a9s-postgresqlX', plan: 'postgresql-single-nano' },
      want: 'cannot transform fields[0] (spec.service → spec.version) (composition a8s-postgresql): transforms[1]: toInteger needs a decimal integer string, got "X"',
    },
    {
      name: 'parameters that are not an object',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', parameters: 'x' },
      want: 'cannot read spec.parameters of the composite (composition a9s-postgresql): not an object',
    },
    {
      name: 'an a8s object without a claim',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-nano' },
      labels: false,
      want: 'cannot name the Postgresql (composition a8s-postgresql): the composite has no crossplane.io/claim-name/crossplane.io/claim-namespace labels',
    },
  ])('$name', ({ backend, spec, labels, want }) => {
    const xr = compositeOf(pg, backend, spec);
    if (labels === false) delete (xr.metadata as Record<string, unknown>).labels;
    expect(() => composeResource(inputOf(pg, backend), xr)).toThrow(ComposeError);
    expect(() => composeResource(inputOf(pg, backend), xr)).toThrow(want);
  });
});

/**
 * A namespaced composite (Crossplane v2, no claim) carries the labels its author wrote. With hostile
 * `crossplane.io/claim-*` labels it must still compose only into its own namespace, under its own name: the MR's
 * labels, the a8s object, the connection Secret and the instance a binding refers to.
 */
describe('composeResource: a namespaced composite with hostile claim labels composes into its own namespace only', () => {
  const hostile = { 'crossplane.io/claim-name': 'their-db', 'crossplane.io/claim-namespace': 'victim', team: 'x' };
  const own = { 'crossplane.io/claim-name': 'app-db', 'crossplane.io/claim-namespace': 'team-b' };
  /** A v2 composite as a developer creates it in team-b: its own name and namespace, the labels they chose. */
  const v2 = (a: Api, backend: Backend, spec: Record<string, unknown>): Record<string, unknown> => {
    const xr = compositeOf(a, backend, spec);
    xr.metadata = { name: 'app-db', namespace: 'team-b', labels: { ...hostile } };
    xr.spec = { ...(xr.spec as Record<string, unknown>), claimRef: undefined };
    return xr;
  };
  const nowhere = (got: unknown) =>
    expect(JSON.stringify(got), 'the hostile labels reach the composed resource').not.toMatch(/victim|their-db/);

  it.each<{ name: string; api: string; backend: Backend; spec: Record<string, unknown>; want: Record<string, unknown> }>([
    {
      name: "a9s instance: the MR carries the composite's own name and namespace",
      api: 'postgresql',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small' },
      want: { 'metadata.labels': own },
    },
    {
      name: 'a8s instance: the Postgresql is named like the composite, in its namespace',
      api: 'postgresql',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' },
      want: { 'spec.forProvider.manifest.metadata': { name: 'app-db', namespace: 'team-b' } },
    },
    {
      name: "a9s binding: the connection Secret goes to the composite's namespace",
      api: 'servicebinding',
      backend: 'a9s',
      spec: { instanceRef: 'pg-1', serviceInstanceType: 'postgresql' },
      want: { 'spec.writeConnectionSecretToRef': { name: 'app-db-creds', namespace: 'team-b' } },
    },
    {
      name: "a8s binding: the instance (CLAIM_NAMESPACE) and the Secrets are in the composite's namespace",
      api: 'servicebinding',
      backend: 'a8s',
      spec: { instanceRef: 'pg-1', serviceInstanceType: 'postgresql' },
      want: {
        'spec.forProvider.manifest.metadata': { name: 'app-db', namespace: 'team-b' },
        'spec.forProvider.manifest.spec.instance.namespace': 'team-b',
        'spec.writeConnectionSecretToRef': { name: 'app-db-creds', namespace: 'team-b' },
        'spec.connectionDetails[0].namespace': 'team-b',
      },
    },
  ])('$name', ({ api: name, backend, spec, want }) => {
    const a = api(name);
    const got = composeResource(inputOf(a, backend), v2(a, backend, spec)).resource;
    for (const [path, value] of Object.entries(want)) expect(get(got, path), path).toEqual(value);
    nowhere(got);
  });

  it.each<{ name: string; api: string; spec: Record<string, unknown>; want: Record<string, unknown> }>([
    {
      name: "a9s instance on v2: the cluster-scoped MR is named after the composite's own namespace and name, with its labels",
      api: 'postgresql',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small' },
      want: {
        'spec.forProvider.manifest.metadata': { name: 'team-b.app-db', labels: own },
        'spec.forProvider.manifest.spec.providerConfigRef': { name: 'postgresql-service-broker' },
        'spec.providerConfigRef': { name: 'kubernetes-provider', kind: 'ClusterProviderConfig' },
        'spec.readiness': { policy: 'DeriveFromObject' },
        'metadata.namespace': undefined,
      },
    },
    {
      name: "a9s binding on v2: the MR publishes <name>-creds into the composite's namespace",
      api: 'servicebinding',
      spec: { instanceRef: 'pg-1', serviceInstanceType: 'postgresql' },
      want: {
        'spec.forProvider.manifest.spec.writeConnectionSecretToRef': { name: 'app-db-creds', namespace: 'team-b' },
        'spec.writeConnectionSecretToRef': undefined,
      },
    },
  ])('$name', ({ api: name, spec, want }) => {
    const a = api(name);
    const input = inputFor(a.backends.a9s as Recipe, { backend: 'a9s', service: a.name, settings: SETTINGS, target: 'v2' });
    const got = composeResource(input, v2(a, 'a9s', spec)).resource;
    for (const [path, value] of Object.entries(want)) expect(get(got, path), path).toEqual(value);
    nowhere(got);
  });

  it('a cluster-scoped (v1) composite keeps the claim labels Crossplane set', () => {
    const xr = compositeOf(api('servicebinding'), 'a8s', { instanceRef: 'pg-1', serviceInstanceType: 'postgresql' });
    const got = composeResource(inputOf(api('servicebinding'), 'a8s'), xr).resource;
    expect(get(got, 'spec.forProvider.manifest.spec.instance.namespace')).toBe('team-a');
  });

  it.each<{ name: string; metadata: Record<string, unknown>; want: string }>([
    {
      name: 'a namespace that is not a string',
      metadata: { name: 'app-db', namespace: 7 },
      want: 'cannot read metadata.namespace of the composite (composition a8s-postgresql): not a string',
    },
    {
      name: 'a namespaced composite without a name',
      metadata: { namespace: 'team-b' },
      want: 'cannot read metadata.name of the namespaced composite (composition a8s-postgresql): not set',
    },
    {
      name: 'labels that are not an object',
      metadata: { name: 'app-db', namespace: 'team-b', labels: 'victim' },
      want: 'cannot read metadata.labels of the composite (composition a8s-postgresql): not an object',
    },
  ])('refuses $name, naming the field', ({ metadata, want }) => {
    const pg = api('postgresql');
    const xr = compositeOf(pg, 'a8s', { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' });
    xr.metadata = metadata;
    expect(() => composeResource(inputOf(pg, 'a8s'), xr)).toThrow(ComposeError);
    expect(() => composeResource(inputOf(pg, 'a8s'), xr)).toThrow(want);
  });
});

describe('composeResource: composites and recipes beyond the catalog', () => {
  const pg = api('postgresql');

  it('a generated value is new on the first composition, then read back from the observed resource', () => {
    const xr = compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small' });
    const wrapped = { ...inputOf(pg, 'a8s'), generated: [{ to: 'spec.secret' }] };
    const bare = { ...inputOf(pg, 'a9s'), generated: [{ to: 'spec.forProvider.secret' }] };
    for (const [input, at] of [
      [wrapped, 'spec.forProvider.manifest.spec.secret'],
      [bare, 'spec.forProvider.secret'],
    ] as const) {
      const first = composeResource(input, xr).resource;
      expect(get(first, at)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(get(composeResource(input, xr, first).resource, at)).toBe(get(first, at));
      expect(get(composeResource(input, xr).resource, at)).not.toBe(get(first, at));
      // Emptied or edited to a non-string: generated anew rather than passed on.
      const emptied = structuredClone(first);
      set(emptied, at, '');
      expect(get(composeResource(input, xr, emptied).resource, at)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // One being deleted (an expired binding's, composed again): a new value, never the one it held.
      const deleting = structuredClone(first);
      set(deleting, 'metadata.deletionTimestamp', '2026-12-05T23:00:00Z');
      const again = get(composeResource(input, xr, deleting).resource, at);
      expect([typeof again, again === get(first, at)]).toEqual(['string', false]);
    }
  });

  it('an object whose credentials expired passes no generated value on: a binding renewed gets a new one', () => {
    const input = {
      ...inputOf(pg, 'a8s'),
      expiresAt: 'spec.expiresAt',
      generated: [{ to: 'spec.secret', live: { from: 'spec.secret' } }],
    };
    const xr = compositeOf(pg, 'a8s', { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' });
    const at = 'spec.forProvider.manifest.spec.secret';
    const noon = Date.parse('2026-12-06T12:00:00Z');
    set(xr, 'spec.expiresAt', '2026-12-06T12:00:00+00:00');
    const first = composeResource(input, xr, undefined, undefined, noon - 1000).resource;
    const wrapped = get(first, 'spec.forProvider.manifest') as Record<string, unknown>;
    expect(get(wrapped, 'metadata.annotations')).toEqual({ [EXPIRES_AT_ANNOTATION]: '2026-12-06T12:00:00.000Z' });
    // Moved later before it expired: the same value, from the object Crossplane observed or the one in the cluster.
    set(xr, 'spec.expiresAt', '2026-12-07T12:00:00Z');
    expect(get(composeResource(input, xr, first, undefined, noon - 1000).resource, at)).toBe(get(first, at));
    expect(get(composeResource(input, xr, undefined, wrapped, noon - 1000).resource, at)).toBe(get(first, at));
    // Renewed after it expired, while the old object is still observed or still in the cluster: a new value.
    for (const [observed, live] of [
      [first, undefined],
      [undefined, wrapped],
    ] as const) {
      const renewed = get(composeResource(input, xr, observed, live, noon).resource, at);
      expect([typeof renewed, renewed === get(first, at)]).toEqual(['string', false]);
    }
    // Without a lifetime: no annotation, and the value it holds is kept.
    delete (xr.spec as Record<string, unknown>).expiresAt;
    const forever = composeResource(input, xr, undefined, undefined, noon).resource;
    expect(get(forever, 'spec.forProvider.manifest.metadata.annotations')).toBeUndefined();
    expect(get(composeResource(input, xr, forever, undefined, noon).resource, at)).toBe(get(forever, at));
  });

  it("fromSecret's connection details follow those the wrapper's fields listed (a gate read first, the Secret's value last)", () => {
    const input = {
      ...inputOf(pg, 'a8s'),
      connectionSecret: { nameSuffix: '-creds', fromSecret: { at: 'spec.connectionDetails', nameSuffix: '-s', keys: ['password'] } },
      wrapper: {
        ...inputOf(pg, 'a8s').wrapper!,
        fields: [{ to: 'spec.connectionDetails[0].fieldPath', value: 'status.gate' }],
      },
    };
    const xr = compositeOf(pg, 'a8s', { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' });
    const details = get(composeResource(input, xr).resource, 'spec.connectionDetails') as Record<string, unknown>[];
    expect(details.map((d) => d.fieldPath)).toEqual(['status.gate', 'data.password']);
  });

  it('a v2 namespaced composite (no claim): the a8s object and the connection secret take its own name and namespace', () => {
    const input = { ...inputOf(pg, 'a8s'), connectionSecret: { nameSuffix: '-creds', fromSecret: A8S_BINDING_SECRET } };
    const xr = compositeOf(pg, 'a8s', { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' });
    xr.metadata = { name: 'app-db', namespace: 'team-b' };
    const got = composeResource(input, xr).resource;
    expect(get(got, 'metadata')).toEqual({ labels: { 'crossplane.io/claim-name': 'app-db', 'crossplane.io/claim-namespace': 'team-b' } });
    expect(get(got, 'spec.forProvider.manifest.metadata')).toEqual({ name: 'app-db', namespace: 'team-b' });
    expect(get(got, 'spec.writeConnectionSecretToRef')).toEqual({ name: 'app-db-creds', namespace: 'team-b' });
    expect(get(got, 'spec.connectionDetails[0].name')).toBe('app-db-service-binding');
  });

  it('an unknown resource kind composes as long as its fields map', () => {
    const input = {
      ...inputOf(pg, 'a9s'),
      resource: { apiVersion: 'example.org/v1alpha1', kind: 'Database' },
      parameters: [],
      parametersTo: undefined,
    };
    const xr = compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small' });
    const got = composeResource(input, xr).resource;
    expect([got.apiVersion, got.kind]).toEqual(['example.org/v1alpha1', 'Database']);
    expect(get(got, 'spec.forProvider.planName')).toBe('postgresql-single-small');
    expect(get(got, 'spec.providerConfigRef')).toEqual({ name: 'postgresql-service-broker' });
  });

  it('a cluster-scoped wrapped resource whose <namespace>.<name> is too long is refused, naming the fix', () => {
    const input = inputFor(pg.backends.a9s as Recipe, { backend: 'a9s', service: pg.name, settings: SETTINGS, target: 'v2' });
    const xr = compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small' });
    xr.metadata = { name: 'x'.repeat(250), namespace: 'team-b' };
    expect(() => composeResource(input, xr)).toThrow(/longer than 253 characters; use a shorter name for the claim/);
  });

  it('connectionSecret.byWrapped without a wrapper is refused', () => {
    const input = { ...inputOf(pg, 'a9s'), connectionSecret: { nameSuffix: '-creds', byWrapped: true } };
    const xr = compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small' });
    expect(() => composeResource(input, xr)).toThrow('connectionSecret.byWrapped needs a wrapper');
  });

  it('a field with ifSet is set only when that composite field is, one with ifUnset only when it is not', () => {
    const input = {
      ...inputOf(pg, 'a9s'),
      fields: [
        { to: 'spec.forProvider.bootstrap.initdb', value: true, ifUnset: 'spec.restoreFrom' },
        { to: 'spec.forProvider.bootstrap.recovery', value: true, ifSet: 'spec.restoreFrom' },
        { from: 'spec.restoreFrom.instance', to: 'spec.forProvider.source', ifSet: 'spec.restoreFrom' },
      ],
    };
    const bootstrap = (more: Record<string, unknown>) => {
      const got = composeResource(input, compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small', ...more }));
      return [get(got.resource, 'spec.forProvider.bootstrap'), get(got.resource, 'spec.forProvider.source')];
    };
    expect(bootstrap({})).toEqual([{ initdb: true }, undefined]);
    expect(bootstrap({ restoreFrom: null })).toEqual([{ initdb: true }, undefined]);
    expect(bootstrap({ restoreFrom: { instance: 'orders' } })).toEqual([{ recovery: true }, 'orders']);
  });

  it('a providerConfig from a field path with a format', () => {
    const input = { ...inputOf(pg, 'a9s'), providerConfig: { fromFieldPath: 'spec.service', format: '%s-broker' } };
    const xr = compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small' });
    expect(get(composeResource(input, xr).resource, 'spec.providerConfigRef')).toEqual({ name: 'a9s-postgresql15-broker' });
  });
});
