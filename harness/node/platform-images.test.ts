import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyedArchive, libraryClosure, usrMerged } from './platform-images';

describe('the base image builder', () => {
  it("finds a program's shared libraries, where the loader finds them and which Debian package holds each", () => {
    const libs = libraryClosure('/usr/bin/tar');
    const libc = libs.find((l) => l.path.endsWith('/libc.so.6'));
    expect(libc?.pkg).toBe('libc6');
    expect(existsSync(libc!.real)).toBe(true);
    // The loader itself comes along: without it no program of the image starts.
    expect(libs.some((l) => l.path.endsWith('/ld-linux-x86-64.so.2') && l.pkg === 'libc6')).toBe(true);
    expect(libs.every((l) => !l.path.includes('vdso'))).toBe(true);
  });

  it('places libraries under /usr, as a merged-/usr Debian 12 and distroless do', () => {
    expect(usrMerged('/lib/x86_64-linux-gnu/libc.so.6')).toBe('/usr/lib/x86_64-linux-gnu/libc.so.6');
    expect(usrMerged('/lib64/ld-linux-x86-64.so.2')).toBe('/usr/lib64/ld-linux-x86-64.so.2');
    expect(usrMerged('/usr/lib/x86_64-linux-gnu/libm.so.6')).toBe('/usr/lib/x86_64-linux-gnu/libm.so.6');
  });

  it("drops an image's archives of old inputs once unused for a day, not one in use, nor an image whose name starts alike", () => {
    const cache = mkdtempSync(join(tmpdir(), 'klutch-kit-images-cache-'));
    const before = process.env.KLUTCH_KIT_CACHE;
    process.env.KLUTCH_KIT_CACHE = cache;
    try {
      const dir = join(cache, 'node-images');
      mkdirSync(dir);
      for (const f of ['crossplane-aaaaaaaaaaaa.oci.tar', 'crossplane-kubernetes-provider-bbbbbbbbbbbb.oci.tar', 'busybox-1.35.oci.tar'])
        writeFileSync(join(dir, f), '');
      const dayAgo = new Date(Date.now() - 2 * 86_400_000);
      for (const f of readdirSync(dir)) utimesSync(join(dir, f), dayAgo, dayAgo);
      expect(keyedArchive('crossplane', 'aaaaaaaaaaaa')).toBe(join(dir, 'crossplane-aaaaaaaaaaaa.oci.tar'));
      expect(readdirSync(dir)).toHaveLength(3);
      // Another build of the image, while the first is in use (just used: its mtime is now): both stay.
      expect(keyedArchive('crossplane', 'dddddddddddd')).toBe(join(dir, 'crossplane-dddddddddddd.oci.tar'));
      expect(readdirSync(dir)).toHaveLength(3);
      // Unused for a day, it goes when new inputs come.
      utimesSync(join(dir, 'crossplane-aaaaaaaaaaaa.oci.tar'), dayAgo, dayAgo);
      expect(keyedArchive('crossplane', 'cccccccccccc')).toBe(join(dir, 'crossplane-cccccccccccc.oci.tar'));
      expect(readdirSync(dir).sort()).toEqual(['busybox-1.35.oci.tar', 'crossplane-kubernetes-provider-bbbbbbbbbbbb.oci.tar']);
    } finally {
      if (before === undefined) delete process.env.KLUTCH_KIT_CACHE;
      else process.env.KLUTCH_KIT_CACHE = before;
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
