/**
 * Graceful shutdown: SIGTERM or SIGINT aborts one process-wide signal, on which servers stop accepting and
 * controllers finish the reconciles in flight; a second signal exits at once.
 */

export interface Shutdown {
  /** Aborted on the first SIGTERM/SIGINT (or `trigger()`). */
  readonly signal: AbortSignal;
  /** Starts the shutdown as a signal would (tests, fatal errors). */
  trigger(reason?: string): void;
  /** Removes the signal handlers. */
  dispose(): void;
}

export function onShutdown(onSignal?: (name: string) => void): Shutdown {
  const ac = new AbortController();
  const handler = (name: NodeJS.Signals) => {
    if (ac.signal.aborted) {
      process.exit(130);
    }
    onSignal?.(name);
    ac.abort(name);
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return {
    signal: ac.signal,
    trigger: (reason = 'shutdown') => ac.abort(reason),
    dispose: () => {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    },
  };
}
