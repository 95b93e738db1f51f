import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { libraryClosure, usrMerged } from './platform-images';

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
});
