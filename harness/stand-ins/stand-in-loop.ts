/**
 * The loop every running stand-in shares (the a8s operators' of the sandbox, the load balancer's): `tick` once a
 * second until stopped. A failing tick (an object deleted between list and write, an API server under load) is tried
 * again on the next; each distinct error is said once, so a stand-in that keeps failing is seen without flooding.
 */
export interface RunningStandIn {
  /** Ends the loop; resolves once the running tick returned. */
  stop(): Promise<void>;
}

/** Runs `tick` every `everyMs`; `say` gets `<name>: <error> (trying again)` once per distinct error. */
export function standInLoop(name: string, tick: () => Promise<void>, say: (line: string) => void, everyMs = 1_000): RunningStandIn {
  let stopped = false;
  let lastError = '';
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      await tick().then(
        () => (lastError = ''),
        (e: unknown) => {
          const m = e instanceof Error ? e.message : String(e);
          if (m !== lastError) say(`${name}: ${m} (trying again)`);
          lastError = m;
        },
      );
      if (!stopped) await new Promise<void>((r) => ((wake = r), setTimeout(r, everyMs)));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
