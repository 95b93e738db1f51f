import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { leaseSlot, serveSlots, type SlotServer } from './cluster-slots';

let server: SlotServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function serve(count: number): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-slots-'));
  const path = join(dir, 'slots.sock');
  server = await serveSlots(path, count);
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
    await new Promise((r) => setTimeout(r, 100));
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

  it('names the socket when there is no slot server', async () => {
    await expect(leaseSlot('/nonexistent/slots.sock', 1000)).rejects.toThrow(/cannot lease a cluster slot from \/nonexistent\/slots.sock/);
  });
});
