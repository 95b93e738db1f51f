import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appCluster, loadKubeconfig, retryBusy } from './kube';

const dir = mkdtempSync(join(tmpdir(), 'kubectl-bind-kube-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, current: string | undefined, contexts: [string, string][]) => {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: contexts.map(([, server]) => ({ name: server, cluster: { server: `https://${server}:6443` } })),
      users: contexts.map(([ctx]) => ({ name: ctx, user: { token: ctx } })),
      contexts: contexts.map(([ctx, server]) => ({ name: ctx, context: { cluster: server, user: ctx } })),
      ...(current ? { 'current-context': current } : {}),
    }),
  );
  return path;
};

describe('the app cluster’s kubeconfig', () => {
  it('merges every file of $KUBECONFIG as kubectl does: first name and first current-context win, missing files skipped', () => {
    const first = file('first', undefined, [['dev', 'dev-server']]);
    const second = file('second', 'prod', [
      ['prod', 'prod-server'],
      ['dev', 'other-dev-server'],
    ]);
    const env = { KUBECONFIG: [join(dir, 'missing'), first, second].join(delimiter) };
    const kc = loadKubeconfig(undefined, env);
    expect(kc.getCurrentContext()).toBe('prod');
    expect(kc.getContexts().map((c) => c.name)).toEqual(['dev', 'prod']);
    expect(kc.getCluster('dev-server')?.server).toBe('https://dev-server:6443');
    expect(appCluster({ context: 'dev' }, env).server).toBe('https://dev-server:6443');
    expect(appCluster({}, env).server).toBe('https://prod-server:6443');
  });

  it('--kubeconfig wins over $KUBECONFIG, and an unknown --context names the ones there are', () => {
    const only = file('only', 'a', [['a', 'a-server']]);
    expect(appCluster({ kubeconfig: only }, { KUBECONFIG: join(dir, 'second') }).server).toBe('https://a-server:6443');
    expect(() => appCluster({ kubeconfig: only, context: 'b' }, {})).toThrow(
      expect.objectContaining({ message: 'the kubeconfig has no context "b"', hint: 'use one of: a' }),
    );
  });
});

describe('calls while the API server is busy', () => {
  const failing = (codes: number[]) => {
    let calls = 0;
    return {
      call: async () => {
        const code = codes[calls++];
        if (code) throw Object.assign(new Error(`HTTP ${code}`), { code });
        return 'done';
      },
      calls: () => calls,
    };
  };

  it('are tried again on 429 (a CRD’s storage (re)initializing) and 503, as client-go retries', async () => {
    const f = failing([429, 503]);
    expect(await retryBusy(f.call)).toBe('done');
    expect(f.calls()).toBe(3);
  });

  it('end at once on any other error, and after the last attempt', async () => {
    const forbidden = failing([403]);
    await expect(retryBusy(forbidden.call)).rejects.toMatchObject({ code: 403 });
    expect(forbidden.calls()).toBe(1);
    const busy = failing([429, 429, 429]);
    await expect(retryBusy(busy.call, undefined, 2)).rejects.toMatchObject({ code: 429 });
    expect(busy.calls()).toBe(2);
  });
});
