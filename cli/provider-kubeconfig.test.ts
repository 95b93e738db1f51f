import { describe, expect, it } from 'vitest';
import { CliError } from './errors';
import { providerCluster } from './kube';
import { providerKubeconfig } from './provider-kubeconfig';

const kubeconfig = (user: string, namespace = 'cluster-a') =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: p, cluster: {server: "https://p.example:6443"}}]\nusers: [{name: u, user: ${user}}]\ncontexts: [{name: c, context: {cluster: p, user: u${namespace ? `, namespace: ${namespace}` : ''}}}]\ncurrent-context: c\n`;

describe('a provider kubeconfig the CLI uses', () => {
  it('is reduced to server, namespace and token; --remote-namespace replaces the namespace', () => {
    const r = providerKubeconfig(kubeconfig('{token: t}', ''), '--remote-kubeconfig f', 'cluster-b');
    expect(r).toMatchObject({ server: 'https://p.example:6443', namespace: 'cluster-b', token: 't' });
    expect(r.yaml).toContain('name: default');
    expect(providerCluster(kubeconfig('{token: t}'), undefined, 'x')).toMatchObject({ namespace: 'cluster-a' });
  });

  it('is refused, naming its source and field, when it would run a program (also from --remote-kubeconfig or a Secret)', () => {
    const exec = kubeconfig('{exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}}');
    expect(() => providerKubeconfig(exec, '--remote-kubeconfig evil.yaml')).toThrow(
      /^--remote-kubeconfig evil\.yaml: users\[u\]\.user\.exec runs a program on this machine/,
    );
    expect(() => providerCluster(exec, undefined, 'Secret klutch-bind/kubeconfig-x key "kubeconfig"')).toThrow(CliError);
    expect(() => providerCluster(kubeconfig('{token: t}', ''))).toThrow(/has no namespace/);
  });
});
