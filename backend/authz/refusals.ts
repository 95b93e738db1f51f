/**
 * Refused binds are visible: counted in `klutch_backend_bind_refusals_total{api,reason}` and written as one audit log
 * line (`audit: true`: who, which API, which cluster, why), the same on every path that calls mayBind.
 */
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { BindIdentity, RefusalReason } from './bind-policy';

const BIND_REFUSALS = 'klutch_backend_bind_refusals_total';

/** The counter on `registry`, made on first use: the HTTP side and the controllers share one registry. */
export function bindRefusals(registry: Registry): Counter<'api' | 'reason'> {
  const existing = registry.getSingleMetric(BIND_REFUSALS);
  if (existing) return existing as Counter<'api' | 'reason'>;
  return new Counter({
    name: BIND_REFUSALS,
    help: 'Binds refused by the authorization rule, by API (resource.group) and reason (not-allowed, default-deny, invalid-rule).',
    labelNames: ['api', 'reason'],
    registers: [registry],
  });
}

export interface Refusal {
  /** Which way of binding: `browser` (/bind), `export-request` (an APIServiceExportRequest made with a kubeconfig). */
  readonly path: string;
  readonly api: string;
  /** `<namespace>/<name>` of the template whose rule refused. */
  readonly template: string;
  readonly reason: RefusalReason;
  readonly message: string;
  readonly identity: BindIdentity & { readonly issuer?: string };
  /** The app cluster's id (`c` of kubectl bind), when known. */
  readonly clusterId?: string;
  /** The consumer's cluster namespace, when it has one. */
  readonly namespace?: string;
}

export function recordRefusal(counter: Counter<'api' | 'reason'>, log: Logger, r: Refusal): void {
  counter.inc({ api: r.api, reason: r.reason });
  log.warn(
    {
      audit: true,
      event: 'bind-refused',
      path: r.path,
      api: r.api,
      template: r.template,
      reason: r.reason,
      issuer: r.identity.issuer,
      subject: r.identity.subject,
      groups: r.identity.groups,
      ...(r.identity.clientId !== undefined ? { clientId: r.identity.clientId } : {}),
      ...(r.clusterId !== undefined ? { clusterId: r.clusterId } : {}),
      ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
      why: r.message,
    },
    'bind refused',
  );
}
