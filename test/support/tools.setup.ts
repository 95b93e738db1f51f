/**
 * Global setup of the `unit` project: builds the real crossplane CLI of both lines once (cached across runs) and hands
 * their paths to the tests through `inject('crank')` (v1.20) and `inject('crankV2')` (v2), so parallel test files
 * never race to build them.
 */
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { ensureCrank, ensureValidateCache } from '../../harness/tools/crank';
import { ensureKrew } from '../../harness/tools/krew';
import { ensurePromtool } from '../../harness/tools/promtool';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the crank v1 binary (v1.20, the default package's claims and XRDs). */
    crank: string;
    /** Path of the crank v2 binary (the `--crossplane v2` output's namespaced XRs). */
    crankV2: string;
    /** A `--cache-dir` for `crank beta validate` seeded with Crossplane's CRDs. */
    crankValidateCache: string;
    /** Path of promtool (the alert rules and dashboard queries synth writes are checked with it). */
    promtool: string;
    /** Paths of krew and its manifest validator (the krew package synth writes is installed with them). */
    krew: { krew: string; validate: string };
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('crank', await ensureCrank());
  project.provide('crankValidateCache', ensureValidateCache());
  project.provide('crankV2', await ensureCrank('v2'));
  ensureValidateCache('v2');
  project.provide('promtool', await ensurePromtool());
  project.provide('krew', await ensureKrew());
}
