import { describe, expect, it } from 'vitest';
import { bearerKubeconfigYaml } from './control-plane';
import { eventually, kubeFromConfig, pollDelay, resendUnsent } from './kube';
import { startLoopbackApi } from './loopback-api';
import { createCa } from './pki';

describe('eventually', () => {
  it('polls every 200 ms at first, then a tenth of the time waited, at most once a second', () => {
    expect([0, 1_000, 2_000, 5_000, 10_000, 120_000].map(pollDelay)).toEqual([200, 200, 200, 500, 1_000, 1_000]);
  });

  it('returns the first value that is not undefined, and names what it waited for when it times out', async () => {
    let calls = 0;
    expect(await eventually('the third call', async () => (++calls === 3 ? 'done' : undefined))).toBe('done');
    await expect(eventually('a value that never comes', async () => undefined, 300)).rejects.toThrow(
      /^timed out after 0.3s waiting for a value that never comes$/,
    );
  });
});

describe('resendUnsent', () => {
  const unsent = () => new Error('Client network socket disconnected before secure TLS connection was established');

  it('sends again while the connection closed before TLS was established, and gives the answer', async () => {
    let calls = 0;
    const answer = await resendUnsent(async () => {
      if (++calls < 3) throw unsent();
      return 'answered';
    });
    expect([answer, calls]).toEqual(['answered', 3]);
  });

  it('fails at once on any other error, and after the last try on that one', async () => {
    let calls = 0;
    await expect(resendUnsent(() => (calls++, Promise.reject(new Error('ECONNREFUSED'))))).rejects.toThrow('ECONNREFUSED');
    expect(calls).toBe(1);
    await expect(resendUnsent(() => (calls++, Promise.reject(unsent())), 2)).rejects.toThrow('before secure TLS');
    expect(calls).toBe(3);
  });
});

describe('kubeFromConfig', () => {
  it('sends its raw requests and its typed calls over kept connections, checked against the kubeconfig CA', async () => {
    // Each new connection costs the API server a TLS handshake (bench/control-plane-handshakes): claims.test made
    // 2,037 of them before, 32 after.
    const api = await startLoopbackApi('kube client test CA', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: req.headers.authorization } }));
    });
    try {
      const kube = kubeFromConfig(bearerKubeconfigYaml('c', api.url, api.ca.cert, 'dev', 'tok'));
      for (let i = 0; i < 5; i++) {
        expect((await kube.request('GET', '/api/v1/namespaces/x')).body).toMatchObject({ metadata: { name: 'Bearer tok' } });
        expect((await kube.core.readNamespace({ name: 'x' })).metadata?.name).toBe('Bearer tok');
      }
      expect(api.connections, 'ten calls, one connection for the raw requests and one for the typed API').toBe(2);
      const stranger = kubeFromConfig(bearerKubeconfigYaml('c', api.url, (await createCa('another CA')).cert, 'dev', 'tok'));
      await expect(stranger.request('GET', '/api/v1/namespaces/x')).rejects.toThrow(/self.signed|unable to verify|certificate/i);
    } finally {
      await api.close();
    }
  });
});
