import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeconfigSecret, secretOfProvider } from './kubeconfig-secret';

const kubeconfig = (server: string, namespace: string, token = 't') =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: default, cluster: {server: "${server}"}}]\nusers: [{name: default, user: {token: ${token}}}]\ncontexts: [{name: default, context: {cluster: default, user: default, namespace: ${namespace}}}]\ncurrent-context: default\n`;
const stored = (name: string, text: string): V1Secret => ({
  metadata: { name },
  data: { kubeconfig: Buffer.from(text).toString('base64') },
});

describe('the provider kubeconfig Secret', () => {
  it('is what Klutch’s CLI creates and its konnector reads: generateName kubeconfig-, the kubeconfig under key kubeconfig', () => {
    const text = kubeconfig('https://p:6443', 'cluster-a');
    expect(kubeconfigSecret('klutch-bind', text)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { generateName: 'kubeconfig-', namespace: 'klutch-bind' },
      type: 'Opaque',
      data: { kubeconfig: Buffer.from(text).toString('base64') },
    });
  });

  it('is reused per provider server and cluster namespace, whatever the token', () => {
    const secrets = [
      stored('other-thing', kubeconfig('https://p:6443', 'cluster-a')),
      stored('kubeconfig-b', kubeconfig('https://p:6443', 'cluster-b')),
      stored('kubeconfig-a', kubeconfig('https://p:6443', 'cluster-a', 'old')),
      stored('kubeconfig-broken', 'not a kubeconfig'),
    ];
    expect(secretOfProvider(secrets, kubeconfig('https://p:6443', 'cluster-a', 'new'))?.metadata?.name).toBe('kubeconfig-a');
    expect(secretOfProvider(secrets, kubeconfig('https://q:6443', 'cluster-a'))).toBeUndefined();
    expect(secretOfProvider(secrets, 'not a kubeconfig')).toBeUndefined();
  });
});
