import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { providerKubeconfigDocument, providerKubeconfigYaml, reduceProviderKubeconfig } from './provider-kubeconfig';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const OTHER_CA = '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n';
const endpoint = { server: 'https://provider.example:6443', ca: CA };
const good = providerKubeconfigYaml(endpoint, 'cluster-abc', 'tok-1');

/** `good` with its first cluster and user changed. */
function tamper(o: { cluster?: Record<string, unknown>; user?: Record<string, unknown>; drop?: 'namespace' | 'token' }): string {
  const doc = parse(good);
  Object.assign(doc.clusters[0].cluster, o.cluster ?? {});
  Object.assign(doc.users[0].user, o.user ?? {});
  if (o.drop === 'namespace') delete doc.contexts[0].context.namespace;
  if (o.drop === 'token') delete doc.users[0].user.token;
  return stringify(doc);
}

describe('reduceProviderKubeconfig', () => {
  it('keeps server, CA, namespace and token of the kubeconfig Klutch writes, and writes it back canonically', () => {
    const r = reduceProviderKubeconfig(good, 'Secret x/y');
    expect(r).toMatchObject({ ok: true, server: endpoint.server, ca: CA, namespace: 'cluster-abc', token: 'tok-1', yaml: good });
  });

  it('drops harmless fields it does not need (preferences, extensions, other contexts)', () => {
    const doc = parse(good);
    doc.clusters[0].cluster.extensions = [{ name: 'x', extension: {} }];
    doc.contexts.push({ name: 'other', context: { cluster: 'default', user: 'default' } });
    const r = reduceProviderKubeconfig(stringify(doc), 'Secret x/y');
    expect(r.ok && r.yaml).toBe(good);
  });

  it.each([
    [
      'exec plugin',
      { user: { exec: { command: '/bin/sh', args: ['-c', 'id'], apiVersion: 'client.authentication.k8s.io/v1' } } },
      'users[default].user.exec',
    ],
    [
      'auth-provider with cmd-path',
      { user: { 'auth-provider': { name: 'gcp', config: { 'cmd-path': '/bin/sh' } } } },
      'users[default].user.auth-provider',
    ],
    ['tokenFile', { user: { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' } }, 'users[default].user.tokenFile'],
    ['client-key file', { user: { 'client-key': '/etc/key.pem' } }, 'users[default].user.client-key'],
    ['impersonation', { user: { as: 'system:admin' } }, 'users[default].user.as'],
    ['CA file', { cluster: { 'certificate-authority': '/etc/passwd' } }, 'clusters[default].cluster.certificate-authority'],
    ['TLS off', { cluster: { 'insecure-skip-tls-verify': true } }, 'clusters[default].cluster.insecure-skip-tls-verify'],
    ['proxy', { cluster: { 'proxy-url': 'http://attacker.example:3128' } }, 'clusters[default].cluster.proxy-url'],
    ['credentials in the server URL', { cluster: { server: 'https://u:p@provider.example' } }, 'clusters[default].cluster.server'],
  ])('refuses a kubeconfig with %s, naming the field', (_what, change, field) => {
    const r = reduceProviderKubeconfig(tamper(change), 'Secret klutch-bind/kubeconfig-x key "kubeconfig"');
    expect(r).toMatchObject({ ok: false, reason: 'KubeconfigUnsafe', field });
    expect(!r.ok && r.message).toContain('Secret klutch-bind/kubeconfig-x key "kubeconfig": ' + field);
  });

  it.each([
    ['an http server', { cluster: { server: 'http://provider.example' } }, /is not https/],
    ['no namespace', { drop: 'namespace' as const }, /no namespace/],
    ['no token', { drop: 'token' as const }, /no bearer token/],
    ['a CA that is no certificate', { cluster: { 'certificate-authority-data': Buffer.from('hello').toString('base64') } }, /no PEM/],
  ])('refuses %s as invalid', (_what, change, message) => {
    const r = reduceProviderKubeconfig(tamper(change), 'Secret x/y');
    expect(r).toMatchObject({ ok: false, reason: 'KubeconfigInvalid' });
    expect(!r.ok && r.message).toMatch(message);
  });

  it('refuses what is not YAML or names no context', () => {
    expect(reduceProviderKubeconfig('{', 'R')).toMatchObject({ ok: false, reason: 'KubeconfigInvalid' });
    expect(reduceProviderKubeconfig('apiVersion: v1\nkind: Config\n', 'R')).toMatchObject({ ok: false, field: 'current-context' });
  });

  describe('pinned to the binding', () => {
    it('accepts a new token for the same server and CA', () => {
      const r = reduceProviderKubeconfig(providerKubeconfigYaml(endpoint, 'cluster-abc', 'tok-2'), 'R', endpoint);
      expect(r).toMatchObject({ ok: true, token: 'tok-2' });
    });
    it.each([
      ['server', { server: 'https://attacker.example:6443', ca: CA }, 'clusters[default].cluster.server'],
      ['CA', { server: endpoint.server, ca: OTHER_CA }, 'clusters[default].cluster.certificate-authority-data'],
      ['TLS server name', { ...endpoint, serverName: 'other' }, 'clusters[default].cluster.tls-server-name'],
    ])('refuses a rotation that moves the %s', (_what, moved, field) => {
      const r = reduceProviderKubeconfig(providerKubeconfigYaml(moved, 'cluster-abc', 'tok-2'), 'R', endpoint);
      expect(r).toMatchObject({ ok: false, reason: 'KubeconfigMoved', field });
    });
  });
});

describe('providerKubeconfigYaml', () => {
  /** What the yaml library writes for these values, without the template: the text every kubeconfig must be. */
  const written = providerKubeconfigDocument;
  const jwt = 'eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlLV8';

  it.each([
    ['a cluster namespace and a JWT', 'bk1a2b3c-x7k2q', jwt],
    ['a namespace that reads as a boolean', 'yes', jwt],
    ['a namespace that reads as null', 'null', 'tok'],
    ['a namespace of digits', '123', 'tok'],
    ['a token with characters that need quotes', 'cluster-abc', 'a: b #c'],
    ['a token that starts with a digit', 'cluster-abc', '0x1f'],
  ])('writes exactly what the yaml library writes, for %s', (_what, namespace, token) => {
    for (const e of [endpoint, { server: 'https://10.0.0.1:6443', ca: OTHER_CA, serverName: 'api.internal' }]) {
      expect(providerKubeconfigYaml(e, namespace, token)).toBe(written(e, namespace, token));
      expect(providerKubeconfigYaml(e, namespace, token)).toBe(written(e, namespace, token)); // from the template
    }
  });
});
