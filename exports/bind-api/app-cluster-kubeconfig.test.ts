import { describe, expect, it } from 'vitest';
import { appClusterKubeConfig, checkAppClusterKubeconfig } from './app-cluster-kubeconfig';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const kubeconfig = (cluster: Record<string, unknown>, user: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'v1',
    clusters: [{ name: 'app', cluster: { server: 'https://app.example.com:6443', 'certificate-authority-data': b64(CA), ...cluster } }],
    users: [{ name: 'op', user }],
    contexts: [{ name: 'c', context: { cluster: 'app', user: 'op' } }],
    'current-context': 'c',
  });

describe('checkAppClusterKubeconfig', () => {
  it('keeps server, CA, server name and a token, or an inline client certificate', () => {
    expect(checkAppClusterKubeconfig(kubeconfig({ 'tls-server-name': 'api.internal' }, { token: 't0k' }), 'Secret x/y')).toEqual({
      ok: true,
      server: 'https://app.example.com:6443',
      ca: CA,
      serverName: 'api.internal',
      token: 't0k',
    });
    const cert = checkAppClusterKubeconfig(kubeconfig({}, { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }), 'S');
    expect(cert).toMatchObject({ ok: true, certData: 'CERT', keyData: 'KEY' });
    const kc = appClusterKubeConfig(cert as Extract<typeof cert, { ok: true }>);
    expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://app.example.com:6443', skipTLSVerify: false });
    expect(kc.getCurrentUser()).toMatchObject({ certData: b64('CERT'), keyData: b64('KEY') });
  });

  it.each([
    [{}, { exec: { command: '/bin/sh', args: ['-c', 'id'] } }, 'users[op].user.exec runs a program on the control plane'],
    [{}, { 'auth-provider': { name: 'gcp', config: { 'cmd-path': '/bin/sh' } } }, 'auth-provider runs an authentication plugin'],
    [{}, { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }, 'tokenFile reads a token file'],
    [{}, { 'client-key': '/etc/key', 'client-certificate': '/etc/crt' }, 'reads a'],
    [{ 'insecure-skip-tls-verify': true }, { token: 't' }, 'insecure-skip-tls-verify turns off TLS verification'],
    [{ 'proxy-url': 'http://evil:3128' }, { token: 't' }, 'proxy-url sends every request through a proxy'],
    [{ 'certificate-authority': '/etc/ca' }, { token: 't' }, 'certificate-authority reads a CA file'],
    [{}, { token: 't', as: 'system:admin' }, 'impersonates another user'],
  ])('refuses %j %j as unsafe, naming the field', (cluster, user, message) => {
    const r = checkAppClusterKubeconfig(kubeconfig(cluster, user), 'Secret team-a/app');
    expect(r).toMatchObject({ ok: false, reason: 'KubeconfigUnsafe' });
    expect((r as { message: string }).message).toContain(message);
    expect((r as { message: string }).message).toContain('Secret team-a/app');
  });

  it.each([
    ['not: [yaml', 'not a kubeconfig'],
    [kubeconfig({ server: 'http://app:8080' }, { token: 't' }), 'is not an https URL'],
    [kubeconfig({}, {}), 'neither a token nor client-certificate-data and client-key-data'],
    [kubeconfig({}, { 'client-certificate-data': b64('CERT') }), 'neither a token'],
    [JSON.stringify({ 'current-context': 'x', contexts: [] }), 'current-context "x" names no context'],
  ])('refuses %s as invalid', (text, message) => {
    const r = checkAppClusterKubeconfig(text, 'S');
    expect(r).toMatchObject({ ok: false, reason: 'KubeconfigInvalid' });
    expect((r as { message: string }).message).toContain(message);
  });
});
