/**
 * The controller machinery shared by the bind backend and the konnector: informers over @kubernetes/client-node,
 * a keyed work queue with de-duplication and capped exponential backoff, terminal errors, Warning Events, Lease
 * leader election, probes and metrics (lib/probes.ts, which the composition function serves too), graceful shutdown. It imports
 * nothing of ours but lib/ (the abortable waits, the probe listener).
 */
export { keepAliveAgent, keepAliveClient, keepAliveConfiguration, type KeepAliveOptions } from './clients';
export { TokenBucket, type RateLimit } from './rate-limit';
export { backoffDelay } from './backoff';
export { Controller, type ReconcileContext, type ReconcileResult } from './controller';
export { causeOf, TerminalError } from './errors';
export { eventRecorder, type Warn } from './events';
export { watchInformer, type InformerEvent, type InformerObject, type WatchInformer } from './informer';
export { byRef, objectKey, refKey, splitKey, type ObjectRef } from './keys';
export { LeaderElector, podNamespace } from './leader';
export { serveProbes, type Probes } from '../lib/probes';
export { runWithInformers, startInformers, stopInformers } from './runner';
export { onShutdown } from './shutdown';
