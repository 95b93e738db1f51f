/**
 * The one lifecycle of controllers on their informers, as controller-runtime's manager keeps it for every controller:
 * start the informers, wait for their first list (or the abort), run the controllers, and on abort let them finish
 * the reconciles in flight before the informers stop. Before the first list a missing object is not known missing,
 * so no controller runs on a cache that has not listed; and a list that keeps failing (RBAC cut, a CRD gone) must
 * not hold a shutdown. The informer retries by itself and says why in its `lastError()` (readiness reads it).
 */
import { untilAborted } from '../lib/abort';

/** What the runner needs of an informer (a `WatchInformer`, or a set of them). */
export interface RunnerInformer {
  /** Resolves after the first attempt (see `synced` for success). */
  start(): Promise<void>;
  /** Resolves once the first list is in the cache. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

/** What the runner needs of a controller (a `Controller`): runs until `signal` aborts, then drains. */
export interface Runnable {
  run(signal: AbortSignal): Promise<void>;
}

export interface RunnerOptions {
  /** Started together, waited for before any controller runs, and stopped together once the controllers drained. */
  readonly informers: readonly RunnerInformer[];
  /** Run together once every informer listed; each resolves after the reconciles it has in flight finished. */
  readonly controllers: readonly Runnable[];
  /** Called once every informer listed, before the controllers run; not when `signal` aborted first. */
  readonly onSynced?: () => void;
  /** Called after the controllers drained (or failed, or never ran), before the informers stop: what lives on them. */
  readonly beforeStop?: () => Promise<void> | void;
}

/**
 * Starts `informers` and resolves once each has listed, or when `signal` aborts (resolving `false`): an informer
 * that cannot list keeps the wait going, restarting itself with backoff.
 */
export async function startInformers(informers: readonly RunnerInformer[], signal?: AbortSignal): Promise<boolean> {
  await Promise.all(informers.map((i) => i.start()));
  await untilAborted(Promise.all(informers.map((i) => i.synced)), signal);
  return !signal?.aborted;
}

export async function stopInformers(informers: readonly Pick<RunnerInformer, 'stop'>[]): Promise<void> {
  await Promise.all(informers.map((i) => i.stop()));
}

/**
 * Runs `o.controllers` on `o.informers` until `signal` aborts; resolves once the controllers drained and the informers
 * stopped. A controller that fails rejects it (after the informers stopped), as `Promise.all` would.
 */
export async function runWithInformers(o: RunnerOptions, signal: AbortSignal): Promise<void> {
  try {
    if (!(await startInformers(o.informers, signal))) return;
    o.onSynced?.();
    await Promise.all(o.controllers.map((c) => c.run(signal)));
  } finally {
    await o.beforeStop?.();
    await stopInformers(o.informers);
  }
}
