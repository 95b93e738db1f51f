import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileLock, fileLockSync } from './lock';
import { sleep } from '../../lib/abort';

const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fileLock', () => {
  it('queues two holders of one process: the second runs after the first released', async () => {
    const path = join(dir, 'a.lock');
    const events: string[] = [];
    const lines: string[] = [];
    const hold = async (who: string) => {
      const release = await fileLock(path, 'testing', (l) => lines.push(l));
      events.push(`${who} in`);
      await sleep(50);
      events.push(`${who} out`);
      release();
    };
    await Promise.all([hold('first'), hold('second')]);
    expect(events).toEqual(['first in', 'first out', 'second in', 'second out']);
    expect(lines).toEqual(['waiting for this process testing ...']);
  });

  it('takes over a lock whose holder is gone', async () => {
    const path = join(dir, 'b.lock');
    const release = fileLockSync(path, 'testing', () => undefined);
    // A pid no process has: the holder died without releasing.
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(path, 'pid'), '2147483646');
    (await fileLock(path, 'testing', () => undefined))();
    release();
  });

  it('refuses to wait blocking for a lock this process holds, instead of hanging', async () => {
    const path = join(dir, 'c.lock');
    const release = await fileLock(path, 'testing', () => undefined);
    expect(() => fileLockSync(path, 'testing', () => undefined)).toThrow(`${path} is held by this process`);
    release();
  });
});
