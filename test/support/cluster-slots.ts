/**
 * Which pair of clusters a test worker uses. Each worker process leases a slot (1..n) from the global setup for as
 * long as it lives: the lease is a connection on a unix socket, so it ends when the process does, however it ends.
 *
 * Why not VITEST_POOL_ID: with `isolate: false` and two projects, vitest 4 hands the same pool id to workers that run
 * at the same time (seen: three cluster files, ids 1, 2, 2), so two files shared a cluster while another idled.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface SlotServer {
  close(): Promise<void>;
}

/** Serves slots 1..`count` on `path`; a client that finds none free waits for one. */
export async function serveSlots(path: string, count: number): Promise<SlotServer> {
  const free = Array.from({ length: count }, (_, i) => i + 1);
  const waiting: Socket[] = [];
  const open = new Set<Socket>();
  const give = (s: Socket, slot: number) => {
    s.write(`${slot}\n`);
    s.once('close', () => {
      const next = waiting.shift();
      if (next) give(next, slot);
      else (free.push(slot), free.sort((a, b) => a - b));
    });
  };
  const server: Server = createServer((s) => {
    open.add(s);
    s.on('error', () => s.destroy());
    s.once('close', () => {
      open.delete(s);
      const i = waiting.indexOf(s);
      if (i >= 0) waiting.splice(i, 1);
    });
    const slot = free.shift();
    if (slot !== undefined) give(s, slot);
    else waiting.push(s);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Workers still holding a lease at teardown are ending anyway.
        waiting.length = 0;
        for (const s of open) s.destroy();
      }),
  };
}

export interface Lease {
  readonly slot: number;
  /** Gives the slot back before the process ends. */
  release(): void;
}

/** Leases a slot for the life of this process (or until released). */
export function leaseSlot(path: string, timeoutMs: number): Promise<Lease> {
  return new Promise((resolve, reject) => {
    const s = createConnection(path);
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no free cluster slot within ${timeoutMs / 1000}s (${path}): more workers than clusters?`));
    }, timeoutMs);
    s.setEncoding('utf8');
    s.once('data', (line: string) => {
      clearTimeout(timer);
      // Held open, but it must not keep the worker alive.
      s.unref();
      resolve({ slot: Number(line.trim()), release: () => s.destroy() });
    });
    s.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot lease a cluster slot from ${path}: ${e.message}`));
    });
  });
}
