/**
 * The loop every running stand-in shares (the a8s operators' of the sandbox, the load balancer's): `tick` when woken
 * (a watch saw a change of what the stand-in acts on) and at the latest every `everyMs`. A failing tick (an object
 * deleted between read and write, an API server under load) is tried again after `retryMs`; each distinct error is
 * said once, so a stand-in that keeps failing is seen without flooding.
 */
export interface RunningStandIn {
  /** Ends the loop; resolves once the running tick returned. */
  stop(): Promise<void>;
}

export interface StandInLoop extends RunningStandIn {
  /** Ticks now, or once more right after the running tick (wakes coming during a tick make one more tick). */
  wake(): void;
}

export interface StandInLoopTiming {
  /** The longest pause between ticks when nothing wakes the loop. @default 1_000 */
  readonly everyMs?: number;
  /** The pause after a failed tick. @default min(everyMs, 1_000) */
  readonly retryMs?: number;
}

/** Runs `tick` on `wake()` and every `everyMs`; `say` gets `<name>: <error> (trying again)` once per distinct error. */
export function standInLoop(name: string, tick: () => Promise<void>, say: (line: string) => void, t: StandInLoopTiming = {}): StandInLoop {
  const everyMs = t.everyMs ?? 1_000;
  const retryMs = t.retryMs ?? Math.min(everyMs, 1_000);
  let stopped = false;
  let woken = false;
  let lastError = '';
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      woken = false;
      const ok = await tick().then(
        () => ((lastError = ''), true),
        (e: unknown) => {
          const m = e instanceof Error ? e.message : String(e);
          if (m !== lastError) say(`${name}: ${m} (trying again)`);
          lastError = m;
          return false;
        },
      );
      if (!stopped && !woken) {
        await new Promise<void>((r) => {
          const timer = setTimeout(r, ok ? everyMs : retryMs);
          wake = () => (clearTimeout(timer), r());
        });
      }
      wake = undefined;
    }
  })();
  return {
    wake: () => {
      woken = true;
      wake?.();
    },
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
