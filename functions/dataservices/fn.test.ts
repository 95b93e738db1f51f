import { Ready, Severity, Status, Target } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { dataServicesFunction, runFunction, TTL } from './fn';
import { compositeOf, fatalMessages as fatals, inputOf, requestOf } from '../../harness/crossplane/function-requests';

const apis: Api[] = await loadCatalog();
const pg = apis.find((a) => a.name === 'postgresql') as Api;
const spec = { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { maxConnections: 100, workMem: '4MB' } };
const xr = () => compositeOf(pg, 'a9s', spec);

describe('runFunction', () => {
  it('echoes the tag and sets the TTL', () => {
    const r = runFunction(requestOf(inputOf(pg, 'a9s'), xr()));
    expect(r.meta).toEqual({ tag: 'tag-1', ttl: TTL });
    expect(fatals(r)).toEqual([]);
  });

  it('passes through what earlier steps desired, and never copies the observed composite into desired', () => {
    const earlier = {
      resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-step-1' } },
      connectionDetails: {},
      ready: Ready.READY_TRUE,
    };
    const r = runFunction(requestOf(inputOf(pg, 'a9s'), xr(), {}, { composite: undefined, resources: { earlier } }));
    expect(Object.keys(r.desired?.resources ?? {}).sort()).toEqual(['a9s-postgresql', 'earlier']);
    expect(r.desired?.resources.earlier).toEqual(earlier);
    expect(r.desired?.composite).toBeUndefined();
    expect(r.desired?.resources['a9s-postgresql']?.resource?.status).toBeUndefined();
    expect(r.desired?.resources['a9s-postgresql']?.ready).toBe(Ready.READY_FALSE);
  });

  it('copies the observed status to the composite status only, with readiness and an Available condition', () => {
    const observed = {
      apiVersion: 'dataservices.anynines.com/v1',
      kind: 'ServiceInstance',
      metadata: { name: 'x' },
      spec: { forProvider: {} },
      status: {
        atProvider: { state: 'succeeded', createdAt: 'c', provisionedAt: 'p', updatedAt: 'u' },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Available' },
          { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
        ],
      },
    };
    const r = runFunction(requestOf(inputOf(pg, 'a9s'), xr(), { 'a9s-postgresql': observed }));
    expect(r.desired?.composite?.resource).toEqual({
      status: {
        managed: { state: 'succeeded', createdAt: 'c', provisionedAt: 'p', updatedAt: 'u', conditions: observed.status.conditions },
      },
    });
    expect(r.desired?.resources['a9s-postgresql']?.ready).toBe(Ready.READY_TRUE);
    expect(r.conditions).toEqual([
      { type: 'DataServiceReady', status: Status.STATUS_CONDITION_TRUE, reason: 'Available', target: Target.TARGET_COMPOSITE_AND_CLAIM },
    ]);
  });

  it('reports the backend failure on composite and claim', () => {
    const observed = {
      status: { conditions: [{ type: 'Synced', status: 'False', reason: 'ReconcileError', message: 'broker: plan not found' }] },
    };
    const r = runFunction(requestOf(inputOf(pg, 'a9s'), xr(), { 'a9s-postgresql': observed }));
    expect(r.conditions).toEqual([
      {
        type: 'DataServiceReady',
        status: Status.STATUS_CONDITION_FALSE,
        reason: 'ReconcileError',
        message: 'a9s postgresql: broker: plan not found',
        target: Target.TARGET_COMPOSITE_AND_CLAIM,
      },
    ]);
    expect(fatals(r)).toEqual([]);
  });

  it('warns about set parameters the backend does not offer', () => {
    const r = runFunction(
      requestOf(
        inputOf(pg, 'a8s'),
        compositeOf(pg, 'a8s', {
          service: 'a9s-postgresql13',
          plan: 'postgresql-single-nano',
          parameters: { workMem: '4MB', maxConnections: 10 },
        }),
      ),
    );
    expect(r.results).toEqual([
      {
        severity: Severity.SEVERITY_WARNING,
        message: 'parameter workMem is not offered by the a8s backend of postgresql and was ignored (composition a8s-postgresql)',
        reason: 'IgnoredParameter',
        target: Target.TARGET_COMPOSITE_AND_CLAIM,
      },
    ]);
  });

  it.each<{ name: string; input: (i: Record<string, any>) => unknown; composite?: boolean | Record<string, unknown>; want: string }>([
    {
      name: 'no input',
      input: () => undefined,
      want: 'cannot validate the input of composition a9s-postgresql: <root>: the step has no input object',
    },
    {
      name: 'a misspelled field',
      input: (i) => ({ ...i, parameterTo: 'x' }),
      want: 'cannot validate the input of composition a9s-postgresql: parameterTo: is not a field of the input',
    },
    {
      name: 'a bad field path',
      input: (i) => ({ ...i, fields: [{ from: 'spec..service', to: 'spec.forProvider.serviceName' }] }),
      want: 'cannot read fields[0] (spec..service → spec.forProvider.serviceName) (composition a9s-postgresql): field path "spec..service": empty segment at 5',
    },
    {
      name: 'a field set through a scalar',
      input: (i) => ({ ...i, fields: [...i.fields, { to: 'spec.forProvider.serviceName.x', value: 1 }] }),
      want: 'cannot set fields[5] (spec.forProvider.serviceName.x) (composition a9s-postgresql): field path "spec.forProvider.serviceName.x": spec.forProvider.serviceName is not an object',
    },
    {
      name: 'no observed composite',
      input: (i) => i,
      composite: false,
      want: 'cannot get the observed composite resource (composition a9s-postgresql): the request has none',
    },
    {
      name: 'a namespaced composite whose namespace is not a string',
      input: (i) => i,
      composite: { metadata: { name: 'db', namespace: ['victim'] } },
      want: 'cannot read metadata.namespace of the composite (composition a9s-postgresql): not a string',
    },
    {
      name: 'a status mapping outside status',
      input: (i) => ({ ...i, status: [{ from: 'status.x', to: 'spec.x' }] }),
      want: 'cannot map the status of a9s-postgresql (composition a9s-postgresql): status mapping to "spec.x" is not below status',
    },
  ])('answers $name with a Fatal result naming the field', ({ input, composite, want }) => {
    const r = runFunction(
      requestOf(
        input(structuredClone(inputOf(pg, 'a9s')) as unknown as Record<string, any>),
        composite === false ? undefined : { ...xr(), ...(typeof composite === 'object' ? composite : {}) },
      ),
    );
    expect(fatals(r)).toEqual([expect.stringContaining(want)]);
    expect(r.meta?.tag).toBe('tag-1');
  });

  it('serves the same through the FunctionHandler', async () => {
    const req = requestOf(inputOf(pg, 'a9s'), xr());
    expect(await dataServicesFunction.RunFunction(req)).toEqual(runFunction(requestOf(inputOf(pg, 'a9s'), xr())));
  });
});
