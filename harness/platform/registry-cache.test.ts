import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedRegistryStorage, registryContentKey, saveRegistryStorage } from './registry-cache';

let dir: string;
let cacheBefore: string | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-cache-'));
  cacheBefore = process.env.KLUTCH_KIT_CACHE;
  process.env.KLUTCH_KIT_CACHE = join(dir, 'cache');
});
afterEach(() => {
  if (cacheBefore === undefined) delete process.env.KLUTCH_KIT_CACHE;
  else process.env.KLUTCH_KIT_CACHE = cacheBefore;
  rmSync(dir, { recursive: true, force: true });
});

const packageRoot = () => {
  const root = join(dir, 'pkg');
  mkdirSync(join(root, 'crds'), { recursive: true });
  writeFileSync(join(root, 'crossplane.yaml'), 'kind: Configuration\n');
  writeFileSync(join(root, 'crds', 'a.yaml'), 'kind: CustomResourceDefinition\n');
  return root;
};

describe('the registry content key', () => {
  it('changes with an image archive, a package file, the image a package embeds and the tools, and only then', () => {
    const root = packageRoot();
    const archives = { 'x/backend:v1': '/cache/backend-aaa.oci.tar', 'x/konnector:v1': '/cache/konnector-bbb.oci.tar' };
    const key = () => registryContentKey(archives, [{ ref: 'xpkg.crossplane.io/a/b:v1', root, embeds: 'x/backend:v1' }], 'crank-v2.2.1');
    const first = key();
    expect(key()).toBe(first);
    expect(
      registryContentKey(
        { ...archives, 'x/backend:v1': '/cache/backend-ccc.oci.tar' },
        [{ ref: 'xpkg.crossplane.io/a/b:v1', root }],
        'crank-v2.2.1',
      ),
    ).not.toBe(registryContentKey(archives, [{ ref: 'xpkg.crossplane.io/a/b:v1', root }], 'crank-v2.2.1'));
    expect(registryContentKey(archives, [{ ref: 'xpkg.crossplane.io/a/b:v1', root }], 'crank-v2.2.1')).not.toBe(first);
    expect(registryContentKey(archives, [{ ref: 'xpkg.crossplane.io/a/b:v1', root, embeds: 'x/backend:v1' }], 'crank-v2.3.0')).not.toBe(
      first,
    );
    writeFileSync(join(root, 'crds', 'a.yaml'), 'kind: CustomResourceDefinition\nspec: {}\n');
    expect(key()).not.toBe(first);
  });
});

describe('the cached registry storage', () => {
  it('is saved whole under its key, found again, and only the most recently used entries are kept', async () => {
    const data = join(dir, 'data');
    mkdirSync(join(data, 'docker', 'registry', 'v2', 'blobs'), { recursive: true });
    writeFileSync(join(data, 'docker', 'registry', 'v2', 'blobs', 'layer'), 'bytes');
    expect(cachedRegistryStorage('k0')).toBeUndefined();
    const entry = (k: string) => join(process.env.KLUTCH_KIT_CACHE!, 'registry-storage', k);
    for (let i = 0; i < 4; i++) {
      await saveRegistryStorage(`k${i}`, data);
      // Distinct use times, oldest first, whatever the file system's timestamp resolution.
      const t = new Date(Date.now() - (10 - i) * 60_000);
      utimesSync(entry(`k${i}`), t, t);
    }
    const found = cachedRegistryStorage('k0');
    expect(found).toBe(entry('k0'));
    expect(readFileSync(join(found!, 'docker', 'registry', 'v2', 'blobs', 'layer'), 'utf8')).toBe('bytes');
    await saveRegistryStorage('k4', data);
    // k0 was used just now and k4 saved now; k1, the least recently used, goes.
    expect(readdirSync(join(process.env.KLUTCH_KIT_CACHE!, 'registry-storage')).sort()).toEqual(['k0', 'k2', 'k3', 'k4']);
  });
});
