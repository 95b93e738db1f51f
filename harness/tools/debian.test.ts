import { describe, expect, it } from 'vitest';
import { ensureDebianPackages, NODE_PACKAGES } from './debian';

describe('Debian packages for the node', () => {
  it('does nothing when every package is there', async () => {
    const lines: string[] = [];
    await ensureDebianPackages([{ name: 'coreutils', provides: '/bin/ls' }], (l) => lines.push(l));
    expect(lines).toEqual([]);
  });

  it('fails naming the packages and the command to run when it cannot install them', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await expect(ensureDebianPackages([{ name: 'klutch-kit-missing', provides: '/nonexistent/klutch-kit' }])).rejects.toThrow(
        /needs the Debian packages klutch-kit-missing, and this machine has no apt-get: install them by hand \(`apt-get install klutch-kit-missing`/,
      );
    } finally {
      process.env.PATH = path;
    }
  });

  it('names runc, not crun, among what the node needs', () => {
    expect(NODE_PACKAGES.map((p) => p.name)).toEqual(
      expect.arrayContaining(['containerd', 'runc', 'containernetworking-plugins', 'iptables']),
    );
    expect(NODE_PACKAGES.map((p) => p.name)).not.toContain('crun');
  });
});
