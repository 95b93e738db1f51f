import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PLUGIN_VERSION } from '../version';
import { ROOT } from '../../harness/crossplane/catalog';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { buildExecutable } from '../../release/plugin-executables';
import type { BuiltExecutable } from './platforms';
import { writeKrewPackage } from './krew';

let bundle: string;
const out = mkdtempSync(join(tmpdir(), 'klutch-krew-test-'));
const license = join(ROOT, 'LICENSE');

beforeAll(async () => {
  bundle = await bundleDeployable(ROOT, deployable('kubectl-bind'));
  writeFileSync(join(out, 'other.mjs'), 'console.log("the other bind");\n');
}, 120_000);
// The executable's test leaves 300 MB here (the archive, krew's copy): none of it is kept.
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Runs a krew tool with no network at all (a network namespace of its own, only loopback) and a KREW_ROOT of its own. */
function offline(bin: string, args: readonly string[], krewRoot: string) {
  const r = spawnSync('unshare', ['-n', bin, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: krewRoot, KREW_ROOT: krewRoot, KREW_NO_UPGRADE_CHECK: '1' },
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('the krew package of kubectl-bind', () => {
  it('is the same bytes for the same bundle, and its manifest carries the archive sha256 and the given URI', async () => {
    const a = await writeKrewPackage(join(out, 'a'), { bundle, license, uri: 'https://example.test/kubectl-bind.tar.gz' });
    const b = await writeKrewPackage(join(out, 'b'), { bundle, license, uri: 'https://example.test/kubectl-bind.tar.gz' });
    expect(readFileSync(a.archive).equals(readFileSync(b.archive))).toBe(true);
    const manifest = readFileSync(a.manifest, 'utf8');
    expect(manifest).toContain(`sha256: ${a.sha256}`);
    expect(manifest).toContain('uri: https://example.test/kubectl-bind.tar.gz');
    expect(manifest).toContain(`version: ${PLUGIN_VERSION}`);
  });

  it('with a cache, archives the same contents once and a changed bundle again, the same bytes as without', async () => {
    const cache = join(out, 'cache');
    const small = join(out, 'small.mjs');
    writeFileSync(small, '#!/usr/bin/env node\nconsole.log("one");\n');
    const fresh = await writeKrewPackage(join(out, 'fresh'), { bundle: small, license });
    const a = await writeKrewPackage(join(out, 'cached-a'), { bundle: small, license, cache });
    expect(readFileSync(a.archive).equals(readFileSync(fresh.archive))).toBe(true);
    expect(a.sha256).toBe(fresh.sha256);
    const [kept] = readdirSync(cache);
    const made = statSync(join(cache, kept!));
    const b = await writeKrewPackage(join(out, 'cached-b'), { bundle: small, license, cache });
    expect(b.sha256).toBe(a.sha256);
    expect(readdirSync(cache)).toEqual([kept]);
    expect(statSync(join(cache, kept!)).mtimeMs).toBe(made.mtimeMs);
    // The bundle edited: archived again, as it would be without a cache, into the same output folder.
    appendFileSync(small, 'console.log("two");\n');
    const edited = await writeKrewPackage(join(out, 'cached-b'), { bundle: small, license, cache });
    expect(edited.sha256).not.toBe(a.sha256);
    expect(
      readFileSync(edited.archive).equals(readFileSync((await writeKrewPackage(join(out, 'fresh-2'), { bundle: small, license })).archive)),
    ).toBe(true);
    expect(readFileSync(edited.manifest, 'utf8')).toContain(`sha256: ${edited.sha256}`);
    expect(readdirSync(cache)).toHaveLength(2);
  });

  it("passes krew's manifest validation and installs with krew, offline; the installed kubectl-bind runs", async () => {
    const { krew, validate } = inject('krew');
    const p = await writeKrewPackage(join(out, 'install'), { bundle, license });
    const root = mkdtempSync(join(out, 'krew-root-'));
    const v = offline(validate, ['-manifest', p.manifest, '-skip-install'], root);
    expect(v.status, v.output).toBe(0);
    expect(v.output).toContain('structural validation OK');
    const i = offline(krew, ['install', '--manifest', p.manifest, '--archive', p.archive], root);
    expect(i.status, i.output).toBe(0);
    // The Node the plugin runs on (cli/main.ts refuses an older one), not one it would refuse.
    expect(i.output).toContain('kubectl bind needs Node.js 22.19 or later on PATH');
    const run = spawnSync(join(root, 'bin', 'kubectl-bind'), ['version'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`kubectl-bind ${PLUGIN_VERSION}`);
  });

  it('installs the same archive as klutch-bind beside another `bind`: kubectl klutch-bind runs it', async () => {
    const { krew, validate } = inject('krew');
    const p = await writeKrewPackage(join(out, 'second'), { bundle, license });
    const root = mkdtempSync(join(out, 'krew-root-'));
    const v = offline(validate, ['-manifest', p.secondManifest, '-skip-install'], root);
    expect(v.status, v.output).toBe(0);
    // Another project's `bind` (kube-bind's, from its own index) is installed first and keeps its name.
    const other = await writeKrewPackage(join(out, 'other'), { bundle: join(out, 'other.mjs'), license });
    const i1 = offline(krew, ['install', '--manifest', other.manifest, '--archive', other.archive], root);
    expect(i1.status, i1.output).toBe(0);
    const i2 = offline(krew, ['install', '--manifest', p.secondManifest, '--archive', p.archive], root);
    expect(i2.status, i2.output).toBe(0);
    expect(i2.output).toContain('kubectl klutch-bind needs Node.js 22.19 or later on PATH');
    const ours = spawnSync(join(root, 'bin', 'kubectl-klutch_bind'), ['version'], { encoding: 'utf8' });
    expect(ours.status, ours.stderr).toBe(0);
    expect(ours.stdout).toContain(`kubectl-bind ${PLUGIN_VERSION}`);
    expect(spawnSync(join(root, 'bin', 'kubectl-bind'), ['version'], { encoding: 'utf8' }).stdout).toBe('the other bind\n');
  });

  it('lists each executable first, for its os and arch, published beside the launcher, and the launcher for the rest', async () => {
    const fake = (os: 'darwin' | 'windows', arch: 'arm64' | 'amd64'): BuiltExecutable => {
      const file = join(out, `fake-${os}-${arch}`);
      writeFileSync(file, `${os}/${arch}`);
      return { platform: { os, arch }, file, nodeLicense: license };
    };
    const uri = 'https://example.test/v1/kubectl-bind.tar.gz';
    const p = await writeKrewPackage(join(out, 'listed'), {
      bundle,
      license,
      uri,
      executables: [fake('darwin', 'arm64'), fake('windows', 'amd64')],
    });
    const spec = (parse(readFileSync(p.secondManifest, 'utf8')) as { spec: { caveats: string; platforms: Record<string, unknown>[] } })
      .spec;
    expect(spec.platforms.map((x) => [x.selector, x.uri, x.bin, x.sha256])).toEqual([
      [
        { matchLabels: { os: 'darwin', arch: 'arm64' } },
        'https://example.test/v1/kubectl-bind-darwin-arm64.tar.gz',
        'kubectl-bind',
        p.executables[0]!.sha256,
      ],
      [
        { matchLabels: { os: 'windows', arch: 'amd64' } },
        'https://example.test/v1/kubectl-bind-windows-amd64.tar.gz',
        'kubectl-bind.exe',
        p.executables[1]!.sha256,
      ],
      [{ matchExpressions: [{ key: 'os', operator: 'In', values: ['linux'] }] }, uri, 'kubectl-klutch_bind', p.sha256],
      [
        {
          matchExpressions: [
            { key: 'os', operator: 'In', values: ['darwin'] },
            { key: 'arch', operator: 'NotIn', values: ['arm64'] },
          ],
        },
        uri,
        'kubectl-klutch_bind',
        p.sha256,
      ],
    ]);
    expect(spec.caveats).toBe(
      'kubectl klutch-bind is one executable, Node inside, on darwin/arm64, windows/amd64;\non other platforms it needs Node.js 22.19 or later on PATH.\n',
    );
    const v = offline(inject('krew').validate, ['-manifest', p.secondManifest, '-skip-install'], mkdtempSync(join(out, 'krew-root-')));
    expect(v.status, v.output).toBe(0);
  });

  it('installs the linux/amd64 executable with krew, offline: kubectl bind runs where no Node is on PATH', async () => {
    const { krew, validate } = inject('krew');
    const executable = await buildExecutable({ os: 'linux', arch: 'amd64' }, { bundle, log: () => undefined });
    const p = await writeKrewPackage(join(out, 'executable'), { bundle, license, executables: [executable] });
    rmSync(dirname(dirname(executable.file)), { recursive: true }); // its temporary folder: the archive holds it
    const root = mkdtempSync(join(out, 'krew-root-'));
    const v = offline(validate, ['-manifest', p.manifest, '-skip-install'], root);
    expect(v.status, v.output).toBe(0);
    const i = offline(krew, ['install', '--manifest', p.manifest, '--archive', p.executables[0]!.archive], root);
    expect(i.status, i.output).toBe(0);
    const installed = join(root, 'bin', 'kubectl-bind');
    const magic = Buffer.alloc(4);
    const fd = openSync(installed, 'r');
    readSync(fd, magic, 0, 4, 0);
    closeSync(fd);
    expect(magic.toString('latin1')).toBe('\x7fELF'); // Node's binary, not the launcher script
    const run = spawnSync(installed, ['version'], { encoding: 'utf8', env: { PATH: '/nonexistent', HOME: root } });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`kubectl-bind ${PLUGIN_VERSION}`);
    expect(run.stderr).toBe(''); // no warning of Node's about the plugin's dependencies, no SEA notice
    expect(readdirSync(join(root, 'store', 'bind', PLUGIN_VERSION)).sort()).toEqual(['LICENSE', 'LICENSE.node', 'kubectl-bind']);
  }, 120_000);

  it('is refused by krew when the archive is not the one the manifest names', async () => {
    const p = await writeKrewPackage(join(out, 'tampered'), { bundle, license });
    const tampered = join(out, 'tampered.tar.gz');
    copyFileSync(p.archive, tampered);
    appendFileSync(tampered, 'x');
    const i = offline(
      inject('krew').krew,
      ['install', '--manifest', p.manifest, '--archive', tampered],
      mkdtempSync(join(out, 'krew-root-')),
    );
    expect(i.status).not.toBe(0);
    expect(i.output).toContain('checksum does not match');
  });
});
