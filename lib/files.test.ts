import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyIfChanged, replaceTree, sha256File, writeIfChanged } from './files';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-files-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Every entry below `dir`: files with their content, links and folders by kind. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const st = lstatSync(join(dir, f));
    out[relative(dir, join(dir, f))] = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'folder' : readFileSync(join(dir, f), 'utf8');
  }
  return out;
}

const PAST = new Date('2020-01-01T00:00:00Z');

describe('replaceTree', () => {
  it('leaves each root holding exactly the files, rewriting only those whose bytes differ', () => {
    const out = mkdtempSync(join(tmp, 'out-'));
    mkdirSync(join(out, 'control-plane', 'crds'), { recursive: true });
    mkdirSync(join(out, 'control-plane', 'gone', 'deeper'), { recursive: true });
    mkdirSync(join(out, 'packages', 'dataservices'), { recursive: true });
    mkdirSync(join(out, 'kept'), { recursive: true });
    writeFileSync(join(out, 'control-plane', 'crds', 'same.yaml'), 'same\n');
    writeFileSync(join(out, 'control-plane', 'crds', 'edited.yaml'), 'edited by hand\n');
    writeFileSync(join(out, 'control-plane', 'crds', 'stale.yaml'), 'stale\n');
    writeFileSync(join(out, 'control-plane', 'gone', 'deeper', 'x.yaml'), 'x\n');
    writeFileSync(join(out, 'control-plane', 'a-file-now-a-folder'), 'file\n');
    writeFileSync(join(out, 'kept', 'other.txt'), 'not ours\n');
    writeFileSync(join(tmp, 'outside.yaml'), 'outside\n');
    symlinkSync(join(tmp, 'outside.yaml'), join(out, 'control-plane', 'linked.yaml'));
    symlinkSync(tmp, join(out, 'packages', 'dataservices', 'apis'));
    for (const f of ['same.yaml', 'edited.yaml']) utimesSync(join(out, 'control-plane', 'crds', f), PAST, PAST);

    const files = new Map([
      ['control-plane/crds/same.yaml', 'same\n'],
      ['control-plane/crds/edited.yaml', 'rendered\n'],
      ['control-plane/linked.yaml', 'rendered, not linked\n'],
      ['control-plane/a-file-now-a-folder/f.yaml', 'f\n'],
      ['packages/dataservices/apis/x/definition.yaml', 'xrd\n'],
      ['app-cluster/konnector/konnector.yaml', 'new root\n'],
    ]);
    replaceTree(out, ['control-plane', 'packages/dataservices', 'app-cluster'], files);

    expect(tree(out)).toEqual({
      'app-cluster': 'folder',
      'app-cluster/konnector': 'folder',
      'app-cluster/konnector/konnector.yaml': 'new root\n',
      'control-plane': 'folder',
      'control-plane/a-file-now-a-folder': 'folder',
      'control-plane/a-file-now-a-folder/f.yaml': 'f\n',
      'control-plane/crds': 'folder',
      'control-plane/crds/edited.yaml': 'rendered\n',
      'control-plane/crds/same.yaml': 'same\n',
      'control-plane/linked.yaml': 'rendered, not linked\n',
      kept: 'folder',
      'kept/other.txt': 'not ours\n',
      packages: 'folder',
      'packages/dataservices': 'folder',
      'packages/dataservices/apis': 'folder',
      'packages/dataservices/apis/x': 'folder',
      'packages/dataservices/apis/x/definition.yaml': 'xrd\n',
    });
    // The unchanged file was not written; the edited one was; nothing outside was followed into.
    expect(statSync(join(out, 'control-plane', 'crds', 'same.yaml')).mtimeMs).toBe(PAST.getTime());
    expect(statSync(join(out, 'control-plane', 'crds', 'edited.yaml')).mtimeMs).not.toBe(PAST.getTime());
    expect(readFileSync(join(tmp, 'outside.yaml'), 'utf8')).toBe('outside\n');
    expect(existsSync(join(tmp, 'x'))).toBe(false);
  });

  it('replaces a root that is a file', () => {
    const out = mkdtempSync(join(tmp, 'out-'));
    writeFileSync(join(out, 'control-plane'), 'a file\n');
    replaceTree(out, ['control-plane'], new Map([['control-plane/kustomization.yaml', 'k\n']]));
    expect(tree(out)).toEqual({ 'control-plane': 'folder', 'control-plane/kustomization.yaml': 'k\n' });
  });
});

describe('writeIfChanged', () => {
  it('writes new or different bytes only', () => {
    const file = join(mkdtempSync(join(tmp, 'w-')), 'sub', 'f.txt');
    expect(writeIfChanged(file, 'a\n')).toBe(true);
    expect(writeIfChanged(file, 'a\n')).toBe(false);
    expect(writeIfChanged(file, 'b\n')).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('b\n');
  });
});

describe('copyIfChanged', () => {
  it('copies once, again when the source is replaced or the copy edited, and never writes through a link', () => {
    const dir = mkdtempSync(join(tmp, 'c-'));
    const from = join(dir, 'bundle.mjs');
    const to = join(dir, 'dist', 'bundle.mjs');
    writeFileSync(from, 'one\n');
    expect(copyIfChanged(from, to)).toBe(true);
    expect(copyIfChanged(from, to)).toBe(false);
    // A new bundle in the cache (the same size here): a new mtime.
    writeFileSync(from, 'two\n');
    utimesSync(from, new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    expect(copyIfChanged(from, to)).toBe(true);
    expect(readFileSync(to, 'utf8')).toBe('two\n');
    // The copy edited by hand.
    writeFileSync(to, 'six\n');
    expect(copyIfChanged(from, to)).toBe(true);
    expect(readFileSync(to, 'utf8')).toBe('two\n');
    // A link in its place is replaced, its target left alone.
    rmSync(to);
    writeFileSync(join(dir, 'target'), 'target\n');
    symlinkSync(join(dir, 'target'), to);
    expect(copyIfChanged(from, to)).toBe(true);
    expect(lstatSync(to).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('target\n');
  });
});

describe('sha256File', () => {
  it('is the sha256 of the whole file, across its 1 MiB pieces', () => {
    const file = join(mkdtempSync(join(tmp, 'h-')), 'big');
    const bytes = randomBytes(2.5 * (1 << 20));
    writeFileSync(file, bytes);
    expect(sha256File(file)).toBe(createHash('sha256').update(bytes).digest('hex'));
  });
});
