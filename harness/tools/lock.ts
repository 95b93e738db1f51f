/**
 * One holder at a time across processes and within one: a folder made atomically, holding the holder's pid. Waits
 * while a live process holds it (this one included: two callers in one process queue too); takes over a lock whose
 * holder is gone. Go builds (one build of a binary at a time) and Debian installs (apt-get refuses a second caller
 * of its lists lock at once) take it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sleep } from '../../lib/abort';

/** Takes the lock folder `path`; resolves with its release. `doing` names the holder's work in the waiting line. */
export async function fileLock(path: string, doing: string, log: (line: string) => void): Promise<() => void> {
  for (let said = false; ; said = true) {
    const taken = tryLock(path, doing, said ? undefined : log);
    if (taken) return taken;
    await sleep(1_000);
  }
}

/** fileLock, blocking the thread while it waits (for a caller that cannot be async). */
export function fileLockSync(path: string, doing: string, log: (line: string) => void): () => void {
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (let said = false; ; said = true) {
    const taken = tryLock(path, doing, said ? undefined : log);
    if (taken) return taken;
    // Blocking the thread, this process could never release a lock it holds itself.
    if (holderOf(path) === process.pid) throw new Error(`${path} is held by this process, which cannot wait for it blocking`);
    Atomics.wait(wait, 0, 0, 1_000);
  }
}

function holderOf(path: string): number {
  try {
    return Number(readFileSync(join(path, 'pid'), 'utf8') || 0);
  } catch {
    return 0;
  }
}

/** The release when the lock was free (or its holder gone), else undefined after saying who holds it. */
function tryLock(path: string, doing: string, log: ((line: string) => void) | undefined): (() => void) | undefined {
  mkdirSync(dirname(path), { recursive: true });
  for (;;) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'pid'), String(process.pid));
      return () => rmSync(path, { recursive: true, force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    // 0: being made (no pid yet) or just released: look again.
    const holder = holderOf(path);
    if (holder && !alive(holder)) {
      rmSync(path, { recursive: true, force: true });
      continue;
    }
    log?.(`waiting for ${holder === process.pid ? 'this process' : `another process (pid ${holder || '?'})`} ${doing} ...`);
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
