/**
 * Which pair of clusters a test worker uses. Each worker process leases a slot (1..n) from the global setup for as
 * long as it lives: the lease is a connection on a unix socket, so it ends when the process does, however it ends.
 * On its lease a worker can ask the setup for more (`Lease.ask`: cluster `b` of its slot is started only when a file
 * first asks for it, cluster.ts); each question is a line `<id> <text>`, each answer a line `<id> <text>`.
 *
 * Why not VITEST_POOL_ID: with `isolate: false` and two projects, vitest 4 hands the same pool id to workers that run
 * at the same time (seen: three cluster files, ids 1, 2, 2), so two files shared a cluster while another idled.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface SlotServer {
  close(): Promise<void>;
}

/** What the server answers a question asked on a lease of `slot`; a rejection is answered as `error <message>`. */
export type Answer = (slot: number, question: string) => Promise<string>;

/** Serves slots 1..`count` on `path`; a client that finds none free waits for one. */
export async function serveSlots(path: string, count: number, answer?: Answer): Promise<SlotServer> {
  const free = Array.from({ length: count }, (_, i) => i + 1);
  const waiting: Socket[] = [];
  const open = new Set<Socket>();
  const give = (s: Socket, slot: number) => {
    s.write(`${slot}\n`);
    onLines(s, (line) => {
      const [id, ...rest] = line.split(' ');
      const question = rest.join(' ');
      const reply = answer
        ? answer(slot, question).then((a) => `ok ${a}`)
        : Promise.reject(new Error('this slot server answers no questions'));
      void reply
        .catch((e: unknown) => `error ${(e instanceof Error ? e.message : String(e)).replace(/\n/g, ' | ')}`)
        .then((a) => s.writable && s.write(`${id} ${a}\n`));
    });
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
  /** Asks the slot server (its `Answer`); rejects with the server's error, or when the lease is gone. */
  ask(question: string): Promise<string>;
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
    let slot: number | undefined;
    let next = 0;
    const pending = new Map<string, { resolve: (a: string) => void; reject: (e: Error) => void }>();
    onLines(s, (line) => {
      if (slot === undefined) {
        clearTimeout(timer);
        // Held open, but it must not keep the worker alive.
        s.unref();
        slot = Number(line);
        const ask = (question: string) =>
          new Promise<string>((res, rej) => {
            if (s.destroyed) return rej(new Error(`the lease of slot ${slot} is gone; cannot ask "${question}"`));
            const id = String(++next);
            pending.set(id, { resolve: res, reject: rej });
            s.write(`${id} ${question}\n`);
          });
        resolve({ slot, ask, release: () => s.destroy() });
        return;
      }
      const [id, status, ...rest] = line.split(' ');
      const p = pending.get(id!);
      pending.delete(id!);
      if (status === 'ok') p?.resolve(rest.join(' '));
      else p?.reject(new Error(rest.join(' ')));
    });
    s.once('close', () => {
      for (const p of pending.values()) p.reject(new Error(`the cluster slot server at ${path} closed the lease of slot ${slot}`));
      pending.clear();
    });
    s.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot lease a cluster slot from ${path}: ${e.message}`));
    });
  });
}

/** Calls `f` with each complete line that arrives on `s`. */
function onLines(s: Socket, f: (line: string) => void): void {
  let buffered = '';
  s.setEncoding('utf8');
  s.on('data', (chunk: string) => {
    buffered += chunk;
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      f(line);
    }
  });
}
