/**
 * The order in which vitest hands test files to its workers: vitest's own (failed first, then the longest by its
 * results cache, then the largest), except that the files on the shared Pod platform's chain start first in the
 * cluster project. The files that hold the platform with the default package (`holdV1`) must all run before the
 * package move of crossplane-v2-native can start, and the move then bounds the run; vitest's cache is local (a CI
 * machine starts without it, and any single-file run rewrites it), so a holder could otherwise start minutes late.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * In this order, before every other file of their project: the holders, the longest first (the object store's runs
 * two PostgreSQL clusters and a restore), then the file that moves.
 */
export const CHAIN_FIRST = [
  'test/cluster/cnpg.test.ts',
  'test/cluster/object-store.test.ts',
  'test/cluster/platform-pods.test.ts',
  'test/cluster/crossplane-claims.test.ts',
  'test/cluster/network-policies.test.ts',
  'test/cluster/release.test.ts',
  'test/cluster/why-not-ready.test.ts',
  'test/cluster/crossplane-v2-native.test.ts',
] as const;

export class ChainFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = (CHAIN_FIRST as readonly string[]).indexOf(relative(this.ctx.config.root, f.moduleId));
      return i < 0 ? CHAIN_FIRST.length : i;
    };
    const group = (f: TestSpecification): number => f.project.config.sequence.groupOrder;
    // Stable: vitest's order is kept within a group apart from the chain's files.
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => group(a.f) - group(b.f) || rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}
