import { describe, expect, it } from 'vitest';
import { ARCHIVING_FAILING, bindingHold, holdOf, readyCondition, withHold } from './claim-hold';

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

  it("says a Backup waiting for WAL archiving that fails is the platform operator's to mend, and goes on by itself", () => {
    const hold = holdOf([c('Synced', 'True'), c('DataServiceReady', 'False', ARCHIVING_FAILING, 'cnpg backup: waiting for Cluster pg')]);
    expect(hold).toMatchObject({ hop: 'data service', reason: 'ArchivingFailing' });
    expect(hold?.todo).toMatch(
      /^the instance cannot archive its WAL to the platform's object store.* the platform operator mends .*goes on by itself/,
    );
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
    const lost = bindingHold('postgresqlinstances.anynines.com', {
      ...c('Ready', 'False', 'ProviderUnreachable', 'lost the provider https://cp:6443'),
      lastTransitionTime: 'T1',
    });
    const status = { conditions: [c('DataServiceReady', 'False', 'Provisioning', 'Setting up primary')] };
    expect((withHold(status, 'T0', lost) as { conditions: unknown[] }).conditions[1]).toEqual({
      ...c('Ready', 'False', 'ProviderUnreachable'),
      message: expect.stringMatching(
        /^held by the binding: APIServiceBinding postgresqlinstances\.anynines\.com is not Ready \(ProviderUnreachable\): the konnector has lost the control plane and retries\. What to do: this cluster's binding .*kubectl bind why/,
      ),
      lastTransitionTime: 'T1',
    });
    const readyStatus = { conditions: [c('Ready', 'True')] };
    expect(withHold(readyStatus, 'T0', lost)).toBe(readyStatus);
    expect(bindingHold('b', c('Ready', 'True'))).toBeUndefined();
  });

  it("never carries the binding's own message to the claim's readers, whatever the reason (issue 34)", () => {
    const secret = 'https://10.0.0.1:6443 (namespace kube-bind-x7f): Secret konnector/kubeconfig-abc ClusterRole secret-reader';
    for (const reason of ['ProviderUnreachable', 'SecretNotFound', 'KonnectorNewer', 'SomethingNew', '']) {
      const hold = bindingHold('b', c('Ready', 'False', reason, secret))!;
      const message = readyCondition(hold, 'T0').message;
      expect(message).not.toMatch(/10\.0\.0\.1|kube-bind-x7f|kubeconfig-abc|secret-reader/);
      expect(message).toMatch(reason ? new RegExp(`is not Ready \\(${reason}\\)`) : /is not Ready \(BindingNotReady\)/);
    }
  });

  it('says what every reason the konnector writes means, and an unknown one by name only (lib/binding-reasons.ts)', () => {
    const said = (reason: string) => bindingHold('b', c('Ready', 'False', reason))!.said;
    expect(said('KubeconfigMoved')).toMatch(
      /^APIServiceBinding b is not Ready \(KubeconfigMoved\): the control plane handed out a kubeconfig for another server/,
    );
    expect(said('Connecting')).toBe('APIServiceBinding b is not Ready (Connecting): the konnector is connecting to the control plane');
    // A name the table does not hold, an Object method's among them, is said as it is, with no words.
    for (const reason of ['SomethingNew', 'constructor', 'toString', '__proto__'])
      expect(said(reason)).toBe(`APIServiceBinding b is not Ready (${reason})`);
  });

  it('leaves a Ready claim, and conditions that are not a list of conditions, as they are', () => {
    const readyStatus = { conditions: [c('Ready', 'True')] };
    expect(withHold(readyStatus, 'now')).toBe(readyStatus);
    const odd = { conditions: 'none' };
    expect(withHold(odd, 'now')).toBe(odd);
  });
});
