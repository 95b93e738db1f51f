/**
 * The breaking-change guard as an operator runs it (docs/add-a-data-service.md, "Changing an API"): the manual's
 * Kafka service is synthesized, then changed; `npm run synth -- --against <earlier output or git ref>` refuses the
 * change that would break stored claims before writing anything, and lets a widening through.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectWith, ROOT, runSynth } from '../../harness/crossplane/catalog';
import { docExamples } from '../support/docs';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-breaking-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const kafka = () => {
  const code = docExamples().get('apis/catalog/kafka.ts');
  if (!code) throw new Error('docs/add-a-data-service.md has no "<!-- example: apis/catalog/kafka.ts -->" block');
  return code;
};
/** The manual's service with its `big` size gone and `autoCreateTopics` dropped: two breaks of stored claims. */
const narrowed = (code: string) => {
  const out = code
    .replace("sizes: ['small', 'medium', 'big']", "sizes: ['small', 'medium']")
    .replace("cluster: ['small', 'medium', 'big']", "cluster: ['small', 'medium']")
    .replace(/\s*\{ name: 'autoCreateTopics'[^\n]*/, '');
  expect(out).not.toBe(code);
  return out;
};
const widened = (code: string) =>
  code.replace('parameters: [', "parameters: [\n    { name: 'compression', schema: s.string(), keys: { a9s: 'compression_type' } },");
const catalogWith = (code: string) => join(projectWith({ 'apis/catalog/kafka.ts': code }, tmp), 'apis', 'catalog');

describe('npm run synth -- --against', () => {
  const earlier = join(tmp, 'earlier');

  it('refuses a change that breaks stored claims, naming API, version, field and fix, and writes nothing', () => {
    expect(runSynth(['--catalog', catalogWith(kafka()), '--out', earlier, '--quiet']).status).toBe(0);
    const out = join(tmp, 'narrowed');
    const r = runSynth(['--catalog', catalogWith(narrowed(kafka())), '--out', out, '--against', earlier]);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(
      /^synth: \d+ change\(s\) would break claims already stored \(compared with .*earlier\); nothing was written:$/,
    );
    const api = 'xkafkainstances.anynines.com (KafkaInstance) v1';
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^  ${api.replace(/[.()]/g, '\\$&')} spec.plan: it no longer takes "kafka-cluster-big-ssl"; keep every value`),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/ spec\.parameters\.autoCreateTopics: the field is gone, and stored claims have it; keep the field/),
    );
    expect(existsSync(out)).toBe(false);
  });

  it('lets a new optional field through, and says what it compared', () => {
    const r = runSynth(['--catalog', catalogWith(widened(kafka())), '--out', join(tmp, 'widened'), '--against', earlier]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/--against .*earlier: 12 APIs compared, no breaking change/);
  });

  it('compares with the catalog at a git ref, synthesized from that commit', () => {
    // A repository of our own: the project's files (not its build output), the Kafka service committed.
    const repo = join(tmp, 'repo');
    const skip = new Set(['node_modules', 'dist', '.git', '.sandbox'].map((d) => join(ROOT, d)));
    cpSync(ROOT, repo, { recursive: true, filter: (src) => !skip.has(src) });
    symlinkSync(join(ROOT, 'node_modules'), join(repo, 'node_modules'));
    writeFileSync(join(repo, '.gitignore'), 'node_modules\ndist\n');
    writeFileSync(join(repo, 'apis', 'catalog', 'kafka.ts'), kafka());
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    };
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', 'kafka');
    writeFileSync(join(repo, 'apis', 'catalog', 'kafka.ts'), narrowed(kafka()));
    const r = spawnSync(process.execPath, [join(repo, 'scripts', 'synth.mjs'), '--out', join(repo, 'dist'), '--against', 'HEAD'], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(r.stdout).toMatch(/--against HEAD: synthesizing apis\/catalog at [0-9a-f]{12} to compare with/);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/spec\.plan: it no longer takes "kafka-cluster-big-ssl"/);
    expect(existsSync(join(repo, 'dist'))).toBe(false);
  });
});
