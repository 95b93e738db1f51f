/**
 * Setup file of the `cluster` project (runs in each test file). It waits for the control planes in a hook, whose
 * timeout allows for a first build of Kubernetes (a test's does not), and makes a failing test name the folder with
 * the control-plane logs, so a failure on CI can be read against what the API servers and controllers said.
 */
import { beforeAll, beforeEach } from 'vitest';
import { controlPlanes } from './cluster';
import { podPlatformTestFailed } from './platform/pod-platform';

let runDir: string | undefined;
beforeAll(async () => {
  runDir = (await controlPlanes()).runDir;
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(({ task }) => {
    void podPlatformTestFailed();
    const where = runDir ? `control-plane logs: ${runDir}` : 'the control planes had not started';
    for (const e of task.result?.errors ?? []) e.message = `${e.message}\n(${where})`;
  });
});
