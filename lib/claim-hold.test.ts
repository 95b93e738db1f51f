import { describe, expect, it } from 'vitest';
import { bindingHold, holdOf, withHold } from './claim-hold';

const c = (type: string, status: string, reason?: string, message?: string) => ({
  type,
  status,
  ...(reason ? { reason } : {}),
  ...(message ? { message } : {}),
});

describe('holdOf', () => {
  it.each([
    [
      'Crossplane cannot compose it',
      [c('Synced', 'False', 'ReconcileError', 'x'), c('DataServiceReady', 'False', 'Provisioning')],
      'control plane',
      'ReconcileError',
    ],
    [
      "the backend's operator makes it",
      [c('Synced', 'True'), c('DataServiceReady', 'False', 'Provisioning', 'Setting up primary')],
      'data service',
      'Provisioning',
    ],
    [
      "the backend's operator failed",
      [c('Synced', 'True'), c('DataServiceReady', 'False', 'ProvisioningFailed', 'gave up')],
      'data service',
      'ProvisioningFailed',
    ],
    [
      'a role not reconciled',
      [c('Synced', 'True'), c('DataServiceReady', 'True'), c('RoleNotReconciled', 'False', 'RoleNotReconciled')],
      'data service',
      'RoleNotReconciled',
    ],
    [
      'composed resources not ready',
      [c('Synced', 'True'), c('Ready', 'False', 'Creating', 'Unready resources: db')],
      'control plane',
      'Creating',
    ],
    ['no answer yet', [], 'control plane', 'Waiting'],
  ])('says %s', (_what, conditions, hop, reason) => {
    expect(holdOf(conditions)).toMatchObject({ hop, reason });
  });

  it('says nothing holds a Ready claim, whatever else it reports', () => {
    expect(holdOf([c('Ready', 'True'), c('ContinuousArchiving', 'False', 'Failed')])).toBeUndefined();
  });
});

describe('withHold', () => {
  it('replaces the Ready condition with one that names the hop; the other conditions and fields stay', () => {
    const status = {
      phase: 'x',
      conditions: [c('Ready', 'False', 'Creating'), c('DataServiceReady', 'False', 'Provisioning', 'Setting up primary')],
    };
    expect(withHold(status, '2026-12-06T10:00:00Z')).toEqual({
      phase: 'x',
      conditions: [
        c('DataServiceReady', 'False', 'Provisioning', 'Setting up primary'),
        {
          ...c('Ready', 'False', 'Provisioning'),
          message: expect.stringMatching(
            /^held by the data service: DataServiceReady False \(Provisioning\): Setting up primary\. What to do: /,
          ),
          lastTransitionTime: '2026-12-06T10:00:00Z',
        },
      ],
    });
  });

  it("ends what the hop said with one period, however the backend's words end", () => {
    const status = { conditions: [c('DataServiceReady', 'False', 'Unschedulable', 'Pod x cannot be scheduled: no volume.')] };
    const ready = (withHold(status, 'now') as { conditions: { message: string }[] }).conditions[1]!;
    expect(ready.message).toContain('cannot be scheduled: no volume. What to do: ');
  });

  it('says a claim with no status yet waits for the control plane', () => {
    expect(withHold({}, '2026-12-06T10:00:00Z')).toEqual({
      conditions: [
        expect.objectContaining({
          type: 'Ready',
          status: 'False',
          reason: 'Waiting',
          message: expect.stringMatching(/^held by the control plane: no status/),
        }),
      ],
    });
  });

  it("names the binding, before the claim's own hold, while the binding is not Ready; a Ready claim stays Ready", () => {
    const lost = bindingHold({
      ...c('Ready', 'False', 'ProviderUnreachable', 'lost the provider https://cp:6443'),
      lastTransitionTime: 'T1',
    });
    const status = { conditions: [c('DataServiceReady', 'False', 'Provisioning', 'Setting up primary')] };
    expect((withHold(status, 'T0', lost) as { conditions: unknown[] }).conditions[1]).toEqual({
      ...c('Ready', 'False', 'ProviderUnreachable'),
      message: expect.stringMatching(
        /^held by the binding: APIServiceBinding Ready False \(ProviderUnreachable\): lost the provider https:\/\/cp:6443\. What to do: this cluster's binding/,
      ),
      lastTransitionTime: 'T1',
    });
    const readyStatus = { conditions: [c('Ready', 'True')] };
    expect(withHold(readyStatus, 'T0', lost)).toBe(readyStatus);
    expect(bindingHold(c('Ready', 'True'))).toBeUndefined();
  });

  it('leaves a Ready claim, and conditions that are not a list of conditions, as they are', () => {
    const readyStatus = { conditions: [c('Ready', 'True')] };
    expect(withHold(readyStatus, 'now')).toBe(readyStatus);
    const odd = { conditions: 'none' };
    expect(withHold(odd, 'now')).toBe(odd);
  });
});
