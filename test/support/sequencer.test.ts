import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../harness/root';
import { CHAIN_FIRST } from './sequencer';

describe('the chain-first sequencer', () => {
  it('names files that exist, and every cluster file that holds the default package or moves it', () => {
    for (const f of CHAIN_FIRST) expect(existsSync(join(repoRoot(), f)), f).toBe(true);
    const dir = join(repoRoot(), 'test', 'cluster');
    const chain = readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts'))
      .filter((f) => /\bholdV1\(|\.exclusive\(\)/.test(readFileSync(join(dir, f), 'utf8')))
      .map((f) => `test/cluster/${f}`);
    expect(chain.length).toBeGreaterThan(0);
    expect([...CHAIN_FIRST].sort()).toEqual(chain.sort());
  });
});
