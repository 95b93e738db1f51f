/**
 * APIServiceExportRequest → APIServiceExport. For each requested resource the claim CRD `<resource>.<group>` must
 * exist (while it does not: condition ExportsReady False, reason CRDNotFound; after a minute the request Fails) and a
 * template must offer it (else the request Fails at once), and the identity that bound the cluster last must be
 * allowed it (authz/binder.ts). The exports are derived from the CRD and the template (derive-export.ts) and applied;
 * then the request Succeeds. The reconcile decides one outcome — the status and when to look again — and commits it
 * in one status write at the end. Finished requests are deleted after ten minutes, as Klutch does.
 */
import { causeOf, type ObjectRef, type ReconcileContext, type ReconcileResult, type Warn } from '../../controller';
import {
  APIServiceExportRequestConditions,
  BIND_API_VERSION,
  CRD_NOT_FOUND_REASON,
  Kinds,
  sameConditions,
  setCondition,
  type APIServiceExport,
  type APIServiceExportRequest,
  type APIServiceExportRequestStatus,
} from '../../exports/bind-api';
import type { RecordedBinder } from '../authz/binder';
import type { BindDecision } from '../authz/bind-policy';
import type { Refusal } from '../authz/refusals';
import { DeriveError, deriveExport } from '../derive-export';
import type { Exportable } from '../exportable';
import type { ConsumerScope } from '../consumer-access';

/** Klutch's wait for a request's CRD; `--export-request-timeout` sets ours. */
export const CRD_WAIT_MS = 60_000;
export const FINISHED_TTL_MS = 10 * 60_000;
const RECHECK_MS = 2_000;

export interface ExportRequestDeps {
  readonly consumerScope: ConsumerScope;
  /** How long a request waits for its CRD. */
  readonly crdWaitMs: number;
  /** The request from the cache. */
  getRequest(ref: ObjectRef): APIServiceExportRequest | undefined;
  /** Whether CRD `<resource>.<group>` exists (cache). */
  crdExists(name: string): boolean;
  /** The template and CRD offering an API (in `version`, if given), if any. */
  exportable(group: string, resource: string, version?: string): Promise<Exportable | undefined>;
  /** mayBind for the identity recorded on the cluster namespace's ClusterBinding. */
  mayRequest(clusterNamespace: string, e: Exportable): Promise<{ decision: BindDecision; binder: RecordedBinder; api: string }>;
  /** Counts and audits a refusal. */
  refused(r: Refusal): void;
  /** A Warning Event on the request, where `kubectl describe` shows the provider's operator why it failed. @default none */
  readonly warn?: Warn;
  /** Server-side apply of a derived export. */
  applyExport(e: APIServiceExport): Promise<void>;
  /** Deletes a finished request (gone already is fine). */
  deleteRequest(ref: ObjectRef): Promise<void>;
  /** The one status write of a reconcile. */
  writeStatus(req: APIServiceExportRequest, status: APIServiceExportRequestStatus): Promise<void>;
  /** @default Date.now */
  now?(): number;
}

/** What a reconcile decided: the status to hold and when to look again. */
interface Outcome {
  readonly status: APIServiceExportRequestStatus;
  readonly requeueAfterMs: number;
}

export async function reconcileExportRequest(
  d: ExportRequestDeps,
  ref: ObjectRef,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  const req = d.getRequest(ref);
  if (!req || req.metadata.deletionTimestamp || !ref.namespace) return;
  const now = d.now?.() ?? Date.now();
  const age = now - new Date(req.metadata.creationTimestamp ?? now).getTime();
  const phase = req.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') {
    if (age < FINISHED_TTL_MS) return { requeueAfterMs: FINISHED_TTL_MS - age };
    await d.deleteRequest(ref);
    return;
  }
  const outcome = await decide(d, req, ref.namespace, age, ctx);
  const held = req.status ?? {};
  const next = { ...held, ...outcome.status };
  // Field by field: the cached status comes back with its keys sorted, so JSON as written always differed.
  if (next.phase !== held.phase || next.terminalMessage !== held.terminalMessage || !sameConditions(next.conditions, held.conditions))
    await d.writeStatus(req, outcome.status);
  return { requeueAfterMs: outcome.requeueAfterMs };
}

async function decide(
  d: ExportRequestDeps,
  req: APIServiceExportRequest,
  ns: string,
  age: number,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<Outcome> {
  const failed = (message: string, reason = 'NotExported'): Outcome => {
    // The Event's recorder logs it too.
    if (d.warn) d.warn({ apiVersion: BIND_API_VERSION, kind: Kinds.APIServiceExportRequest, metadata: req.metadata }, reason, message);
    else ctx.log.warn({ reason, terminalMessage: message }, 'export request failed');
    return {
      status: {
        phase: 'Failed',
        terminalMessage: message,
        conditions: setCondition(req.status?.conditions, {
          type: APIServiceExportRequestConditions.ExportsReady,
          status: 'False',
          reason,
          message,
        }),
      },
      requeueAfterMs: FINISHED_TTL_MS,
    };
  };
  const wait = d.crdWaitMs;
  const exports: APIServiceExport[] = [];
  for (const res of req.spec.resources) {
    const group = res.group ?? '';
    const name = `${res.resource}.${group}`;
    if (!d.crdExists(name)) {
      if (age >= wait)
        return failed(
          `CRD ${name} does not exist (waited ${wait / 1000}s); install it on the provider and request again`,
          CRD_NOT_FOUND_REASON,
        );
      return {
        status: {
          phase: 'Pending',
          conditions: setCondition(req.status?.conditions, {
            type: APIServiceExportRequestConditions.ExportsReady,
            status: 'False',
            reason: CRD_NOT_FOUND_REASON,
            message: `CRD ${name} not found; the request fails if it does not appear within ${wait / 1000}s`,
          }),
        },
        requeueAfterMs: Math.min(RECHECK_MS, wait - age),
      };
    }
    // Klutch's `versions`: the first one offered is the app cluster's (it gets a CRD of that version alone); none
    // asked for, the default template's.
    const asked = res.versions ?? [];
    let exportable: Exportable | undefined;
    for (const v of asked.length ? asked : [undefined]) if (!exportable) exportable = await d.exportable(group, res.resource, v);
    if (!exportable) {
      if (asked.length && (await d.exportable(group, res.resource)))
        return failed(
          `no APIServiceExportTemplate offers ${name} in version ${asked.join(' or ')}; ask the provider which versions it offers, or leave versions out for its default`,
        );
      return failed(
        `no APIServiceExportTemplate exports ${name} as a namespaced resource; ask the provider which APIs it offers (/resources)`,
      );
    }
    // The consumer's kubeconfig can request any API: the same rule as /bind, for the identity that bound last.
    const authz = await d.mayRequest(ns, exportable);
    if (!authz.decision.allowed) {
      const t = exportable.template.metadata;
      d.refused({
        path: 'export-request',
        api: authz.api,
        template: `${t.namespace}/${t.name}`,
        reason: authz.decision.reason,
        message: authz.decision.message,
        identity: authz.binder,
        namespace: ns,
      });
      const who = authz.binder.subject === undefined ? 'no verified bind is recorded for this cluster' : authz.binder.subject;
      return failed(`${who}: ${authz.decision.message}, and bind it with kubectl bind`, 'Forbidden');
    }
    try {
      exports.push(deriveExport(exportable.crd, exportable.template, ns, d.consumerScope, exportable.version));
    } catch (e) {
      const refused = causeOf(e, DeriveError);
      if (refused) return failed(refused.message);
      throw e;
    }
  }
  for (const e of exports) await d.applyExport(e);
  ctx.log.info({ exports: exports.map((e) => e.metadata.name) }, 'exported');
  return {
    status: {
      phase: 'Succeeded',
      conditions: setCondition(req.status?.conditions, { type: APIServiceExportRequestConditions.ExportsReady, status: 'True' }),
    },
    requeueAfterMs: FINISHED_TTL_MS,
  };
}
