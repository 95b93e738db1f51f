/**
 * Global setup of the `unit` project: builds the real crossplane CLI once (cached across runs) and hands its path
 * to the tests through `inject('crank')`, so parallel test files never race to build it.
 */
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { ensureCrank, ensureValidateCache } from '../tools/crank';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the crank binary. */
    crank: string;
    /** A `--cache-dir` for `crank beta validate` seeded with Crossplane's CRDs. */
    crankValidateCache: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('crank', await ensureCrank());
  project.provide('crankValidateCache', ensureValidateCache());
}
