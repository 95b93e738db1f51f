import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startControlPlanes } from './control-plane';

// Bad options fail before anything is built or started; the running control planes are tested in test/cluster/.
describe('startControlPlanes options', () => {
  it('refuses a cluster name that is not a DNS label', async () => {
    await expect(startControlPlanes({ clusters: ['App_1'], binary: '/nonexistent' })).rejects.toThrow(
      `cluster name "App_1" is not a DNS label`,
    );
  });

  it('refuses repeated cluster names', async () => {
    await expect(startControlPlanes({ clusters: ['a', 'a'], binary: '/nonexistent' })).rejects.toThrow('cluster names repeat: a, a');
  });

  it('refuses an identity named like the admin', async () => {
    await expect(startControlPlanes({ clusters: ['a'], identities: [{ name: 'admin' }], binary: '/nonexistent' })).rejects.toThrow(
      'identity name "admin"',
    );
  });

  it('names the binary when it cannot be started', async () => {
    await expect(startControlPlanes({ clusters: ['a'], binary: '/nonexistent/kube', log: () => undefined })).rejects.toThrow(
      'the control-plane binary /nonexistent/kube does not exist',
    );
  });

  it('names the log and shows its tail when a process dies before it is ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-cp-test-'));
    const binary = join(dir, 'kube');
    writeFileSync(binary, '#!/bin/sh\necho "$1: cannot bind, port taken" >&2\nexit 1\n');
    chmodSync(binary, 0o755);
    try {
      await expect(startControlPlanes({ clusters: ['a'], binary, log: () => undefined })).rejects.toThrow(
        /etcd of etcd exited \(code 1\) before it was ready; its log is \S+etcd\.log:\netcd: cannot bind, port taken/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
