import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { checkKubeconfigSecret } from './kubeconfig';

const ref = { name: 'kubeconfig-abc', namespace: 'klutch-bind', key: 'kubeconfig' as const };
const kubeconfig = (o: { server?: string; namespace?: string; user?: Record<string, unknown>; cluster?: Record<string, unknown> } = {}) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default', cluster: { server: o.server ?? 'https://provider:6443', ...o.cluster } }],
    users: [{ name: 'default', user: { token: 't', ...o.user } }],
    contexts: [
      {
        name: 'default',
        context: { cluster: 'default', user: 'default', ...(o.namespace === '' ? {} : { namespace: o.namespace ?? 'cluster-x' }) },
      },
    ],
    'current-context': 'default',
  });
const secret = (data: Record<string, string>): V1Secret => ({
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

describe('checkKubeconfigSecret', () => {
  it('accepts a kubeconfig with a server and a namespace, and reports both', () => {
    expect(checkKubeconfigSecret(ref, secret({ kubeconfig: kubeconfig() }))).toMatchObject({
      ok: true,
      server: 'https://provider:6443',
      namespace: 'cluster-x',
      token: 't',
    });
  });

  it.each([
    ['an exec plugin', { user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'touch' } } }, 'users[default].user.exec'],
    [
      'an auth-provider',
      { user: { 'auth-provider': { name: 'oidc', config: { 'cmd-path': '/bin/sh' } } } },
      'users[default].user.auth-provider',
    ],
    ['a tokenFile', { user: { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' } }, 'users[default].user.tokenFile'],
    ['TLS verification off', { cluster: { 'insecure-skip-tls-verify': true } }, 'clusters[default].cluster.insecure-skip-tls-verify'],
    ['a proxy', { cluster: { 'proxy-url': 'http://evil:3128' } }, 'clusters[default].cluster.proxy-url'],
    ['a CA file', { cluster: { 'certificate-authority': '/etc/ssl/ca.pem' } }, 'clusters[default].cluster.certificate-authority'],
  ])('refuses a kubeconfig with %s as KubeconfigUnsafe, naming the Secret and the field', (_what, o, field) => {
    const r = checkKubeconfigSecret(ref, secret({ kubeconfig: kubeconfig(o) }));
    expect(r).toMatchObject({ ok: false, reason: 'KubeconfigUnsafe', field });
    expect((r as { message: string }).message).toContain(`Secret klutch-bind/kubeconfig-abc key "kubeconfig": ${field}`);
  });

  it.each([
    ['a missing Secret', undefined, 'SecretNotFound', 'Secret klutch-bind/kubeconfig-abc (spec.kubeconfigSecretRef) does not exist'],
    ['a Secret it may not read', 'forbidden' as const, 'SecretForbidden', 'may not read Secret klutch-bind/kubeconfig-abc'],
    ['a Secret without the key', secret({ other: 'x' }), 'KubeconfigMissing', 'has no key "kubeconfig"'],
    ['text that is not a kubeconfig', secret({ kubeconfig: '{{{' }), 'KubeconfigInvalid', 'not a kubeconfig'],
    ['a context without namespace', secret({ kubeconfig: kubeconfig({ namespace: '' }) }), 'KubeconfigInvalid', 'has no namespace'],
    ['a plain-http server', secret({ kubeconfig: kubeconfig({ server: 'http://provider' }) }), 'KubeconfigInvalid', 'is not https'],
  ])('refuses %s, naming the Secret and the fix', (_what, s, reason, message) => {
    const r = checkKubeconfigSecret(ref, s);
    expect(r).toMatchObject({ ok: false, reason });
    expect((r as { message: string }).message).toContain(message);
  });
});
