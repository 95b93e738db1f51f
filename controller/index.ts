/**
 * The controller machinery shared by the bind backend and the konnector: informers over @kubernetes/client-node,
 * a keyed work queue with de-duplication and capped exponential backoff, terminal errors, Warning Events, Lease
 * leader election, probes and metrics (lib/probes.ts, which the composition function serves too), graceful shutdown. It imports
 * nothing of ours but lib/ (the abortable waits, the probe listener).
 */
export { keepAliveAgent, keepAliveClient, keepAliveConfiguration, type KeepAliveOptions } from './clients';
export { TokenBucket, type RateLimit } from './rate-limit';
export { backoffDelay, type Backoff } from './backoff';
export { Controller, type ControllerOptions, type Reconcile, type ReconcileContext, type ReconcileResult } from './controller';
export { causeOf, isTerminal, TerminalError } from './errors';
export { eventRecorder, type EventRecorderOptions, type EventSubject, type Warn } from './events';
export { watchInformer, type InformerEvent, type InformerObject, type WatchInformer, type WatchInformerOptions } from './informer';
export { byRef, objectKey, refKey, splitKey, type ObjectRef } from './keys';
export { diagnoseLease, LeaderElector, type LeaderElectorOptions, podNamespace } from './leader';
export { controllerMetrics, type ControllerMetrics } from './metrics';
export { parseAddress, serveProbes, type Check, type Probes, type ProbesOptions } from '../lib/probes';
export { WorkQueue, type WorkQueueOptions } from './queue';
export { runWithInformers, startInformers, stopInformers, type Runnable, type RunnerInformer, type RunnerOptions } from './runner';
export { onShutdown, type Shutdown } from './shutdown';
