import { describe, expect, it } from 'vitest';
import { debianOwners, debianVersions, ensureDebianPackages } from './debian';

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
});

describe("Debian's package database, asked once", () => {
  it('gives the versions of the packages dpkg knows in one answer and names those it does not know', () => {
    const v = debianVersions(['coreutils', 'klutch-kit-no-such-package', 'tar']);
    expect(v.lines.split('\n')).toEqual([expect.stringMatching(/^coreutils=\S+$/), expect.stringMatching(/^tar=\S+$/)]);
    expect(v.unknown).toEqual(['klutch-kit-no-such-package']);
    // The same set in another order is the answer already had.
    expect(debianVersions(['tar', 'klutch-kit-no-such-package', 'coreutils'])).toBe(v);
  });

  it('names the package owning each path, and leaves out a path no package owns', () => {
    const owners = debianOwners(['/bin/ls', '/nonexistent/klutch-kit', '/bin/tar']);
    expect([...owners]).toEqual([
      ['/bin/ls', 'coreutils'],
      ['/bin/tar', 'tar'],
    ]);
  });
});
