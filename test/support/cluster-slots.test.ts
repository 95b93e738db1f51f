import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Answer, leaseSlot, serveSlots, type SlotServer } from './cluster-slots';
import { sleep } from '../../lib/abort';

let server: SlotServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function serve(count: number, answer?: Answer): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-slots-'));
  const path = join(dir, 'slots.sock');
  server = await serveSlots(path, count, answer);
  return path;
}

describe('cluster slots', () => {
  it('gives workers that hold leases at the same time different slots, and a freed slot to the one waiting', async () => {
    const path = await serve(2);
    const first = await leaseSlot(path, 5000);
    const second = await leaseSlot(path, 5000);
    expect([first.slot, second.slot].sort()).toEqual([1, 2]);
    let third: number | undefined;
    const waiting = leaseSlot(path, 5000).then((l) => (third = l.slot));
    await sleep(100);
    expect(third).toBeUndefined();
    first.release();
    await waiting;
    expect(third).toBe(first.slot);
  });

  it('says so when no slot frees up in time', async () => {
    const path = await serve(1);
    await leaseSlot(path, 5000);
    await expect(leaseSlot(path, 200)).rejects.toThrow(/no free cluster slot within 0.2s/);
  });

  it("answers a lease's questions with the slot it holds, each to its asker, and passes a refusal on", async () => {
    const path = await serve(2, async (slot, question) => {
      if (question === 'fail') throw new Error('no such\ncluster');
      // The slower answer is written last: answers are matched by id, not by order.
      await sleep(question === 'slow' ? 100 : 0);
      return `${question} of slot ${slot}`;
    });
    const one = await leaseSlot(path, 5000);
    const two = await leaseSlot(path, 5000);
    await expect(Promise.all([one.ask('slow'), one.ask('cluster b'), two.ask('cluster b')])).resolves.toEqual([
      `slow of slot ${one.slot}`,
      `cluster b of slot ${one.slot}`,
      `cluster b of slot ${two.slot}`,
    ]);
    await expect(one.ask('fail')).rejects.toThrow('no such | cluster');
    one.release();
    await expect(one.ask('cluster b'), 'a released lease asks nothing').rejects.toThrow(/lease of slot \d is gone/);
  });

  it('refuses questions when the server answers none', async () => {
    const lease = await leaseSlot(await serve(1), 5000);
    await expect(lease.ask('cluster b')).rejects.toThrow('this slot server answers no questions');
  });

  it('names the socket when there is no slot server', async () => {
    await expect(leaseSlot('/nonexistent/slots.sock', 1000)).rejects.toThrow(/cannot lease a cluster slot from \/nonexistent\/slots.sock/);
  });
});
