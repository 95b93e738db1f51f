/**
 * Waiting that ends when a shutdown begins: every retry loop and every "until synced" wait of the backend, the
 * konnector, the controller machinery and kubectl-bind goes through these, so SIGTERM or Ctrl-C never waits on a
 * server that will not answer. The harness, the tests and the benches wait with the same `sleep`: one way to wait.
 */

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return void setTimeout(resolve, ms);
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Resolves when `p` does, or when `signal` aborts, whichever comes first; `p`'s rejection passes through. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return p;
  if (signal.aborted) return Promise.resolve(undefined);
  let done!: () => void;
  const aborted = new Promise<undefined>((resolve) => {
    done = () => resolve(undefined);
    signal.addEventListener('abort', done, { once: true });
  });
  return Promise.race([p, aborted]).finally(() => signal.removeEventListener('abort', done));
}
