/**
 * APIServiceExportRequest → APIServiceExport. For each requested resource the claim CRD `<resource>.<group>` must
 * exist (while it does not: condition ExportsReady False, reason CRDNotFound; after a minute the request Fails) and a
 * template must offer it (else the request Fails at once). The export is derived from the CRD and the template
 * (derive-export.ts) and applied; then the request Succeeds. Finished requests are deleted after ten minutes, as
 * Klutch does.
 */
import { Controller, objectKey, splitKey, type ReconcileResult } from '../../controller';
import {
  APIServiceExportRequestConditions,
  CRD_NOT_FOUND_REASON,
  type APIServiceExportRequest,
  type APIServiceExportRequestStatus,
} from '../../exports/bind-api';
import { mayRequest } from '../authz/binder';
import { bindRefusals, recordRefusal } from '../authz/refusals';
import { DeriveError, deriveExport } from '../derive-export';
import { findExportable } from '../exportable';
import { cachedExportables } from '../informers';
import { apiMessage, APPLY, BindResources, FIELD_MANAGER, isNotFound, MERGE_PATCH } from '../kube';
import { setCondition } from './conditions';
import { ours, type ControllerDeps } from './deps';

/** Klutch's wait for a request's CRD; `--export-request-timeout` sets ours. */
export const CRD_WAIT_MS = 60_000;
export const FINISHED_TTL_MS = 10 * 60_000;
const RECHECK_MS = 2_000;

export function exportRequestsController(d: ControllerDeps): Controller {
  const c = new Controller({
    name: 'exportrequests',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: (key) => reconcileExportRequest(d, key),
  });
  c.watch(d.leader.exportRequests, (r) => (ours(d, r.metadata.namespace) ? [objectKey(r)] : []));
  // A CRD or template appearing lets waiting requests go on.
  const pending = () =>
    d.leader.exportRequests
      .list()
      .filter((r) => (!r.status?.phase || r.status.phase === 'Pending') && ours(d, r.metadata.namespace))
      .map((r) => objectKey(r));
  c.watch(d.serving.crds, pending);
  c.watch(d.serving.templates, pending);
  return c;
}

export async function reconcileExportRequest(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const req = d.leader.exportRequests.get(splitKey(key).name, splitKey(key).namespace);
  if (!req || req.metadata.deletionTimestamp) return;
  const ns = req.metadata.namespace!;
  const age = Date.now() - new Date(req.metadata.creationTimestamp ?? Date.now()).getTime();
  const phase = req.status?.phase;
  const wait = d.exportRequestTimeoutMs ?? CRD_WAIT_MS;
  if (phase === 'Succeeded' || phase === 'Failed') {
    if (age < FINISHED_TTL_MS) return { requeueAfterMs: FINISHED_TTL_MS - age };
    const r = BindResources.exportRequests;
    await d.clients.custom
      .deleteNamespacedCustomObject({ group: r.group, version: r.version, plural: r.plural, namespace: ns, name: req.metadata.name! })
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    return;
  }

  const source = cachedExportables(d.serving);
  const exports = [];
  for (const res of req.spec.resources) {
    const group = res.group ?? '';
    const name = `${res.resource}.${group}`;
    if (!d.serving.crds.get(name)) {
      if (age >= wait)
        return fail(d, req, `CRD ${name} does not exist (waited ${wait / 1000}s); install it on the provider and request again`);
      await writeStatus(d, req, {
        phase: 'Pending',
        conditions: setCondition(req.status?.conditions, {
          type: APIServiceExportRequestConditions.ExportsReady,
          status: 'False',
          reason: CRD_NOT_FOUND_REASON,
          message: `CRD ${name} not found; the request fails if it does not appear within ${wait / 1000}s`,
        }),
      });
      return { requeueAfterMs: Math.min(RECHECK_MS, wait - age) };
    }
    const exportable = await findExportable(source, d.consumerScope, group, res.resource);
    if (!exportable) {
      return fail(
        d,
        req,
        `no APIServiceExportTemplate exports ${name}${d.consumerScope === 'Namespaced' ? ' as a namespaced resource' : ''}; ask the provider which APIs it offers (/resources)`,
      );
    }
    // The consumer's kubeconfig can request any API: the same rule as /bind, for the identity that bound last.
    const authz = await mayRequest(d.clients, ns, exportable, d.defaultBindPolicy);
    if (!authz.decision.allowed) {
      const t = exportable.template.metadata;
      recordRefusal(bindRefusals(d.registry), d.log, {
        path: 'export-request',
        api: authz.api,
        template: `${t.namespace}/${t.name}`,
        reason: authz.decision.reason,
        message: authz.decision.message,
        identity: authz.binder,
        namespace: ns,
      });
      const who = authz.binder.subject === undefined ? 'no verified bind is recorded for this cluster' : authz.binder.subject;
      return fail(d, req, `${who}: ${authz.decision.message}, and bind it with kubectl bind`, 'Forbidden');
    }
    try {
      exports.push(deriveExport(exportable.crd, exportable.template, ns, d.consumerScope));
    } catch (e) {
      if (e instanceof DeriveError) return fail(d, req, e.message);
      throw e;
    }
  }
  const r = BindResources.exports;
  for (const e of exports) {
    try {
      await d.clients.custom.patchNamespacedCustomObject(
        {
          group: r.group,
          version: r.version,
          plural: r.plural,
          namespace: ns,
          name: e.metadata.name!,
          body: e,
          fieldManager: FIELD_MANAGER,
          force: true,
        },
        APPLY,
      );
    } catch (err) {
      throw new Error(`cannot apply APIServiceExport ${ns}/${e.metadata.name}: ${apiMessage(err)}`);
    }
  }
  await writeStatus(d, req, {
    phase: 'Succeeded',
    conditions: setCondition(req.status?.conditions, { type: APIServiceExportRequestConditions.ExportsReady, status: 'True' }),
  });
  d.log.info({ request: key, exports: exports.map((e) => e.metadata.name) }, 'exported');
  return { requeueAfterMs: FINISHED_TTL_MS };
}

async function fail(d: ControllerDeps, req: APIServiceExportRequest, message: string, reason?: string): Promise<ReconcileResult> {
  await writeStatus(d, req, {
    phase: 'Failed',
    terminalMessage: message,
    conditions: setCondition(req.status?.conditions, {
      type: APIServiceExportRequestConditions.ExportsReady,
      status: 'False',
      reason: reason ?? (message.startsWith('CRD ') ? CRD_NOT_FOUND_REASON : 'NotExported'),
      message,
    }),
  });
  d.log.warn({ request: `${req.metadata.namespace}/${req.metadata.name}`, err: message }, 'export request failed');
  return { requeueAfterMs: FINISHED_TTL_MS };
}

async function writeStatus(d: ControllerDeps, req: APIServiceExportRequest, status: APIServiceExportRequestStatus): Promise<void> {
  if (JSON.stringify({ ...req.status, ...status }) === JSON.stringify(req.status)) return;
  const r = BindResources.exportRequests;
  await d.clients.custom.patchNamespacedCustomObjectStatus(
    {
      group: r.group,
      version: r.version,
      plural: r.plural,
      namespace: req.metadata.namespace!,
      name: req.metadata.name!,
      body: { status },
    },
    MERGE_PATCH,
  );
}
