import { describe, expect, it } from 'vitest';
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { admitsIngress, type Source } from './network-policy';

const policy = (namespace: string, spec: object): V1NetworkPolicy => ({ metadata: { name: 'p', namespace }, spec }) as V1NetworkPolicy;
const app = { namespace: 'a', labels: { app: 'x' } };
const pod = (namespace: string, labels: Record<string, string> = {}): Source => ({
  namespace,
  namespaceLabels: { 'kubernetes.io/metadata.name': namespace },
  labels,
  ip: '10.0.0.9',
});
const host: Source = { ip: '192.168.1.1' };

describe('admitsIngress', () => {
  it.each([
    ['no policy selects the Pod: anything', [], pod('b'), 80, true],
    ['a policy with no rule: nothing', [policy('a', { podSelector: {}, policyTypes: ['Ingress'] })], pod('a'), 80, false],
    ['a policy of another namespace does not isolate', [policy('b', { podSelector: {}, policyTypes: ['Ingress'] })], pod('c'), 80, true],
    ['egress-only does not isolate ingress', [policy('a', { podSelector: {}, policyTypes: ['Egress'] })], pod('c'), 80, true],
    [
      'a rule without from: any peer on its port',
      [policy('a', { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] })],
      pod('z'),
      80,
      true,
    ],
    ['... not another port', [policy('a', { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] })], pod('z'), 81, false],
    ['... nor another protocol', [policy('a', { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] })], pod('z'), 80, false, 'UDP'],
    [
      'a namespaceSelector: Pods of that namespace only',
      [
        policy('a', {
          podSelector: {},
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'mon' } } }] }],
        }),
      ],
      pod('mon'),
      80,
      true,
    ],
    [
      '... not of another',
      [
        policy('a', {
          podSelector: {},
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'mon' } } }] }],
        }),
      ],
      pod('tenant'),
      80,
      false,
    ],
    ['... nor the host', [policy('a', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: {} }] }] })], host, 80, false],
    [
      'a podSelector alone: Pods of the policy namespace',
      [policy('a', { podSelector: {}, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'c' } } }] }] })],
      pod('a', { app: 'c' }),
      80,
      true,
    ],
    [
      '... not the same labels elsewhere',
      [policy('a', { podSelector: {}, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'c' } } }] }] })],
      pod('b', { app: 'c' }),
      80,
      false,
    ],
    [
      'an ipBlock: by address',
      [policy('a', { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '192.168.0.0/16', except: ['192.168.1.0/24'] } }] }] })],
      { ip: '192.168.2.3' },
      80,
      true,
    ],
    [
      '... minus its except',
      [policy('a', { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '192.168.0.0/16', except: ['192.168.1.0/24'] } }] }] })],
      host,
      80,
      false,
    ],
    ['_from as client-node names it', [policy('a', { podSelector: {}, ingress: [{ _from: [{ podSelector: {} }] }] })], pod('b'), 80, false],
  ] as const)('%s', (_name, policies, source, port, want, protocol?: string) => {
    expect(admitsIngress(policies as never, app, source, port, protocol ?? 'TCP')).toBe(want);
  });
});
