/**
 * Export requests, wired: keys are APIServiceExportRequests `<cluster ns>/<name>`; a CRD or template appearing lets
 * the waiting ones go on.
 */
import { byRef, Controller, objectKey } from '../../controller';
import { mayRequest } from '../authz/binder';
import { bindRefusals, recordRefusal } from '../authz/refusals';
import { findExportable } from '../exportable';
import { cachedExportables } from '../informers';
import { bindObjects, type APIServiceExport, type APIServiceExportRequest } from '../../exports/bind-api';
import { messageOf, BindResources, FIELD_MANAGER } from '../kube';
import { ours, type ControllerDeps } from './deps';
import { CRD_WAIT_MS, reconcileExportRequest, type ExportRequestDeps } from './export-request.reconcile';

export function exportRequestsController(d: ControllerDeps): Controller {
  const requests = bindObjects<APIServiceExportRequest>(d.clients.custom, BindResources.exportRequests);
  const exports = bindObjects<APIServiceExport>(d.clients.custom, BindResources.exports);
  const deps: ExportRequestDeps = {
    consumerScope: d.consumerScope,
    crdWaitMs: d.exportRequestTimeoutMs ?? CRD_WAIT_MS,
    getRequest: (ref) => d.leader.exportRequests.get(ref.name, ref.namespace),
    crdExists: (name) => d.serving.crds.get(name) !== undefined,
    exportable: (group, resource, version) => findExportable(cachedExportables(d.serving), group, resource, version),
    mayRequest: (ns, e) => mayRequest(d.clients, ns, e, d.defaultBindPolicy),
    refused: (r) => recordRefusal(bindRefusals(d.registry), d.log, r),
    warn: d.warn,
    applyExport: async (e) => {
      const namespace = e.metadata.namespace!;
      try {
        await exports.apply(e, FIELD_MANAGER);
      } catch (err) {
        throw new Error(`cannot apply APIServiceExport ${namespace}/${e.metadata.name}: ${messageOf(err)}`, { cause: err });
      }
    },
    deleteRequest: (ref) => requests.delete({ namespace: ref.namespace!, name: ref.name }),
    writeStatus: (req, status) => requests.patchStatus({ namespace: req.metadata.namespace!, name: req.metadata.name! }, status),
  };
  const c = new Controller({
    name: 'exportrequests',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref, ctx) => reconcileExportRequest(deps, ref, ctx)),
  });
  c.watch(d.leader.exportRequests, (r) => (ours(d, r.metadata.namespace) ? [objectKey(r)] : []));
  const pending = () =>
    d.leader.exportRequests
      .list()
      .filter((r) => (!r.status?.phase || r.status.phase === 'Pending') && ours(d, r.metadata.namespace))
      .map((r) => objectKey(r));
  c.watch(d.serving.crds, pending);
  c.watch(d.serving.templates, pending);
  return c;
}
