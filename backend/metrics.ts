/** The backend's Prometheus metrics (prom-client), on the registry /metrics serves. */
import { Counter, Histogram, type Registry } from 'prom-client';
import { bindRefusals } from './authz/refusals';

export interface BackendMetrics {
  readonly requests: Histogram<'route' | 'code'>;
  readonly binds: Counter<'result'>;
  readonly authFailures: Counter<'reason'>;
  readonly rateLimited: Counter<'route'>;
  /** `klutch_backend_bind_refusals_total{api,reason}`: binds the authorization rule refused (authz/refusals.ts). */
  readonly bindRefusals: Counter<'api' | 'reason'>;
}

export function backendMetrics(registry: Registry): BackendMetrics {
  return {
    requests: new Histogram({
      name: 'klutch_backend_http_request_duration_seconds',
      help: 'Bind endpoint requests by route and status code.',
      labelNames: ['route', 'code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    binds: new Counter({
      name: 'klutch_backend_binds_total',
      help: 'Completed /bind requests by result (ok, refused, error).',
      labelNames: ['result'],
      registers: [registry],
    }),
    authFailures: new Counter({
      name: 'klutch_backend_authentication_failures_total',
      help: 'Refused logins and sessions by reason (state-expired, id-token-audience, session-missing, ...).',
      labelNames: ['reason'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'klutch_backend_rate_limited_total',
      help: 'Requests answered 429 by the per-client rate limit, by route (/authorize, /callback, /bind).',
      labelNames: ['route'],
      registers: [registry],
    }),
    bindRefusals: bindRefusals(registry),
  };
}
