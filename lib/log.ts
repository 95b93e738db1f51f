/**
 * The JSON logs of every process we ship (bind backend, konnector, function): pino, with the level as a word and the
 * time in ISO 8601 UTC, as log pipelines (Loki, Elasticsearch, Cloud Logging) and readers of klog's and zap's JSON
 * expect without a mapping. pino's defaults, a number (30) and epoch milliseconds, mean nothing to a reader of
 * `kubectl logs`.
 */
import { type DestinationStream, type Logger, pino } from 'pino';

export interface LogOptions {
  /** pino's level: trace, debug, info, warn, error, fatal or silent. */
  readonly level: string;
  /** Fields on every line (pino's `base`): the process's pid and hostname when unset. */
  readonly base?: Record<string, unknown>;
}

export function newLogger(o: LogOptions, destination?: DestinationStream): Logger {
  const options = {
    level: o.level,
    ...(o.base ? { base: o.base } : {}),
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
