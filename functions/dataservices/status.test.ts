import { describe, expect, it } from 'vitest';
import { a9sInstance } from '../../backends';
import { inputFor } from '../../recipe';
import { failedState, observeStatus, progress, reportedError, type StatusOutcome } from './status';

type Obj = Record<string, unknown>;
const input = {
  backend: 'a9s',
  service: 'postgresql',
  status: [{ from: 'status.atProvider.state', to: 'status.managed.state' }],
  failedStatePaths: ['status.atProvider.state'],
};
const paths = ['status.atProvider.state', 'status.atProvider.manifest.status.phase'];
const cond = (type: string, status: string, reason: string, message?: string) => ({
  type,
  status,
  reason,
  ...(message ? { message } : {}),
});
const observed = (atProvider: Obj, ...conditions: Obj[]): Obj => ({ status: { atProvider, conditions } });

describe('observeStatus', () => {
  it.each<{ name: string; observed?: Obj; want: StatusOutcome }>([
    { name: 'not observed yet: nothing, not ready, no condition', observed: undefined, want: { composite: {}, ready: false } },
    {
      name: 'provisioning: state copied, not ready, no condition (nothing to report while it progresses)',
      observed: observed({ state: 'in progress' }, cond('Ready', 'False', 'Creating'), cond('Synced', 'True', 'ReconcileSuccess')),
      want: { composite: { status: { managed: { state: 'in progress' } } }, ready: false },
    },
    {
      name: 'ready: Available',
      observed: observed({ state: 'succeeded' }, cond('Ready', 'True', 'Available'), cond('Synced', 'True', 'ReconcileSuccess')),
      want: { composite: { status: { managed: { state: 'succeeded' } } }, ready: true, condition: { status: 'True', reason: 'Available' } },
    },
    {
      name: 'Synced False: the backend message',
      observed: observed({}, cond('Synced', 'False', 'ReconcileError', 'broker: plan not found')),
      want: {
        composite: {},
        ready: false,
        condition: { status: 'False', reason: 'ReconcileError', message: 'a9s postgresql: broker: plan not found' },
      },
    },
    {
      name: 'Synced False without a message',
      observed: observed({}, cond('Synced', 'False', '')),
      want: {
        composite: {},
        ready: false,
        condition: { status: 'False', reason: 'ReconcileError', message: 'a9s postgresql: the backend reports an error' },
      },
    },
    {
      name: 'atProvider state failed: reported even while Ready is only Creating',
      observed: observed({ state: 'failed' }, cond('Ready', 'False', 'Creating'), cond('Synced', 'True', 'ReconcileSuccess')),
      want: {
        composite: { status: { managed: { state: 'failed' } } },
        ready: false,
        condition: { status: 'False', reason: 'ProvisioningFailed', message: 'a9s postgresql: the backend reports state "failed"' },
      },
    },
    {
      name: 'atProvider state failed with a Ready message: the message',
      observed: observed({ state: 'failed' }, cond('Ready', 'False', 'Unavailable', 'disk quota exceeded')),
      want: {
        composite: { status: { managed: { state: 'failed' } } },
        ready: false,
        condition: { status: 'False', reason: 'ProvisioningFailed', message: 'a9s postgresql: disk quota exceeded' },
      },
    },
    {
      name: 'Ready False for a reason other than progress, with a message',
      observed: observed({}, cond('Ready', 'False', 'Unhealthy', 'replica 2 down')),
      want: { composite: {}, ready: false, condition: { status: 'False', reason: 'Unhealthy', message: 'a9s postgresql: replica 2 down' } },
    },
    {
      name: 'ill-typed conditions are ignored',
      observed: { status: { atProvider: { state: 'succeeded' }, conditions: [null, 'Ready', { type: 'Ready' }] } },
      want: { composite: { status: { managed: { state: 'succeeded' } } }, ready: false },
    },
  ])('$name', ({ observed: o, want }) => {
    expect(observeStatus(input, o)).toEqual(want);
  });

  it('gives the same outcome for the same observed state (no churn on an unchanged healthy resource)', () => {
    const o = observed({ state: 'succeeded' }, cond('Ready', 'True', 'Available'));
    expect(observeStatus(input, structuredClone(o))).toEqual(observeStatus(input, structuredClone(o)));
  });

  it('refuses a mapping outside status', () => {
    expect(() => observeStatus({ ...input, status: [{ from: 'status.x', to: 'spec.x' }] }, {})).toThrow(
      'status mapping to "spec.x" is not below status',
    );
  });
});

describe('failedState', () => {
  it.each<{ name: string; observed: unknown; want: string | undefined }>([
    { name: 'a9s failed', observed: { status: { atProvider: { state: 'failed' } } }, want: 'failed' },
    { name: 'a9s in progress', observed: { status: { atProvider: { state: 'in progress' } } }, want: undefined },
    {
      name: 'a8s object phase Failed',
      observed: { status: { atProvider: { manifest: { status: { phase: 'Failed' } } } } },
      want: 'Failed',
    },
    {
      name: 'a8s object phase Running',
      observed: { status: { atProvider: { manifest: { status: { phase: 'Running' } } } } },
      want: undefined,
    },
    { name: 'no status', observed: {}, want: undefined },
    { name: 'not an object', observed: 'x', want: undefined },
  ])('$name', ({ observed: o, want }) => {
    expect(failedState(o, paths)).toBe(want);
  });

  it('reads only the paths the recipe names', () => {
    expect(failedState({ status: { atProvider: { state: 'failed' } } }, ['status.atProvider.manifest.status.phase'])).toBeUndefined();
  });
});

describe('a backend that says what it is doing (progressPaths, failedStates)', () => {
  // A phase sentence and its reason, as CloudNativePG writes them on its Cluster, inside provider-kubernetes' Object.
  const phase = 'status.atProvider.manifest.status.phase';
  const reason = 'status.atProvider.manifest.status.phaseReason';
  const cnpg = {
    backend: 'cnpg',
    service: 'postgresql',
    failedStatePaths: [phase],
    failedStates: ['Unable to create required cluster objects'],
    progressPaths: [phase, reason],
  };
  const inObject = (status: Obj, ...conditions: Obj[]): Obj => ({ status: { atProvider: { manifest: { status } }, conditions } });

  it('while it progresses: DataServiceReady False, reason Provisioning, its words as the message', () => {
    const o = inObject(
      { phase: 'Setting up primary', phaseReason: 'Creating primary instance pg-1' },
      cond('Ready', 'False', 'Unavailable'),
    );
    expect(observeStatus(cnpg, o).condition).toEqual({
      status: 'False',
      reason: 'Provisioning',
      message: 'cnpg postgresql: Setting up primary: Creating primary instance pg-1',
    });
  });

  it('a state it names as failure fails the claim with the phase and its reason', () => {
    const why = 'services "pg-external" is forbidden: exceeded quota: no-lb';
    const o = inObject({ phase: 'Unable to create required cluster objects', phaseReason: why }, cond('Ready', 'False', 'Unavailable'));
    expect(observeStatus(cnpg, o).condition).toEqual({
      status: 'False',
      reason: 'ProvisioningFailed',
      message: `cnpg postgresql: Unable to create required cluster objects: ${why}`,
    });
  });

  it('ready wins over the words; without progressPaths nothing is said while it progresses', () => {
    const o = inObject({ phase: 'Cluster in healthy state' }, cond('Ready', 'True', 'Available'));
    expect(observeStatus(cnpg, o).condition).toEqual({ status: 'True', reason: 'Available' });
    const { progressPaths: _, ...silent } = cnpg;
    expect(observeStatus(silent, inObject({ phase: 'Setting up primary' })).condition).toBeUndefined();
  });

  it('progress joins the non-empty strings at the paths; failedState takes the named states besides fail*', () => {
    expect(progress(inObject({ phase: 'Setting up primary', phaseReason: ' ' }), [phase, reason])).toBe('Setting up primary');
    expect(progress(inObject({ phase: 3 }), [phase])).toBeUndefined();
    expect(failedState(inObject({ phase: 'Unable to create required cluster objects' }), [phase], cnpg.failedStates)).toBe(
      'Unable to create required cluster objects',
    );
    expect(failedState(inObject({ phase: 'Unable to create required cluster objects' }), [phase])).toBeUndefined();
  });
});

describe('reportedError', () => {
  const paths = ['status.atProvider.manifest.status.error'];
  it.each<{ name: string; observed: unknown; want: string | undefined }>([
    {
      name: 'the a8s operator gave up',
      observed: { status: { atProvider: { manifest: { status: { clusterStatus: 'NotRunning', error: 'volume quota exceeded' } } } } },
      want: 'volume quota exceeded',
    },
    { name: 'an empty error is no error', observed: { status: { atProvider: { manifest: { status: { error: ' ' } } } } }, want: undefined },
    { name: 'no status yet', observed: {}, want: undefined },
  ])('$name', ({ observed: o, want }) => expect(reportedError(o, paths)).toBe(want));

  it('fails the composite with the backend error, even while its Ready condition only says it is not ready', () => {
    const o = {
      status: {
        atProvider: { manifest: { status: { error: 'volume quota exceeded' } } },
        conditions: [cond('Ready', 'False', 'Unavailable')],
      },
    };
    expect(observeStatus({ ...input, backend: 'a8s', errorPaths: paths }, o).condition).toEqual({
      status: 'False',
      reason: 'ProvisioningFailed',
      message: 'a8s postgresql: volume quota exceeded',
    });
  });
});

describe('observeStatus of an a9s MR wrapped in a namespaced Object (the v2 target)', () => {
  const v2 = inputFor(a9sInstance({ providerConfigName: 'postgresql-service-broker', parameters: [], ignoredParameters: [] }), {
    backend: 'a9s',
    service: 'postgresql',
    target: 'v2',
  });
  /** The Object as provider-kubernetes shows it: its own conditions, the MR's last observed state inside. */
  const object = (state: string, objectReady: Obj, ...mrConditions: Obj[]): Obj => ({
    status: {
      atProvider: { manifest: { status: { atProvider: { state }, conditions: mrConditions } } },
      conditions: [objectReady, cond('Synced', 'True', 'ReconcileSuccess')],
    },
  });

  it("reads the broker's state inside the Object and shows the MR's own conditions", () => {
    const mrReady = cond('Ready', 'True', 'Available');
    const got = observeStatus(v2, object('succeeded', cond('Ready', 'True', 'Available'), mrReady));
    expect(got.ready).toBe(true);
    expect(got.condition).toEqual({ status: 'True', reason: 'Available' });
    expect(got.composite).toEqual({ status: { managed: { state: 'succeeded', conditions: [mrReady] } } });
  });

  it('provisioning: the Object is Unavailable (DeriveFromObject), which is progress, not failure', () => {
    const got = observeStatus(v2, object('in progress', cond('Ready', 'False', 'Unavailable'), cond('Ready', 'False', 'Creating')));
    expect([got.ready, got.condition]).toEqual([false, undefined]);
  });

  it('a failed broker operation fails the composite', () => {
    const got = observeStatus(
      v2,
      object('failed', cond('Ready', 'False', 'Unavailable'), cond('Ready', 'False', 'Unavailable', 'no capacity')),
    );
    expect(got.condition).toEqual({
      status: 'False',
      reason: 'ProvisioningFailed',
      message: 'a9s postgresql: the backend reports state "failed"',
    });
  });
});
