/**
 * Setup file of the `cluster` project (runs in each test file). It waits for the control planes in a hook, whose
 * timeout allows for a first build of Kubernetes (a test's does not), and makes a failing test name the folder with
 * the control-plane logs, so a failure on CI can be read against what the API servers and controllers said.
 */
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, beforeEach, inject } from 'vitest';
import { type ControlPlaneState, controlPlanes } from './cluster';

beforeAll(async () => {
  await controlPlanes();
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(({ task }) => {
    const file = inject('controlPlaneState');
    const state = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ControlPlaneState) : undefined;
    const where = state && 'runDir' in state ? `control-plane logs: ${state.runDir}` : 'the control planes had not started';
    for (const e of task.result?.errors ?? []) e.message = `${e.message}\n(${where})`;
  });
});
