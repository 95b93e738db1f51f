/** Exports following their CRD and template, wired: keys are APIServiceExports `<cluster ns>/<plural>.<group>`. */
import { byRef, Controller, objectKey } from '../../controller';
import { findExportable } from '../exportable';
import { cachedExportables } from '../informers';
import { bindObjects, type APIServiceExport } from '../../exports/bind-api';
import { messageOf, BindResources } from '../kube';
import { ours, type ControllerDeps } from './deps';
import { reconcileExport, type ExportDeps } from './export.reconcile';

export function exportsController(d: ControllerDeps): Controller {
  const exports = bindObjects<APIServiceExport>(d.clients.custom, BindResources.exports);
  const deps: ExportDeps = {
    consumerScope: d.consumerScope,
    getExport: (ref) => d.leader.exports.get(ref.name, ref.namespace),
    getCrd: (name) => d.serving.crds.get(name),
    exportable: (group, resource, version) => findExportable(cachedExportables(d.serving), group, resource, version),
    deleteExport: (ref) => exports.delete({ namespace: ref.namespace!, name: ref.name }),
    replaceExport: async (e) => {
      const namespace = e.metadata.namespace!;
      const name = e.metadata.name!;
      try {
        await exports.replace(e);
      } catch (err) {
        throw new Error(`cannot replace APIServiceExport ${namespace}/${name}: ${messageOf(err)}`, { cause: err });
      }
    },
  };
  const c = new Controller({
    name: 'exports',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref, ctx) => reconcileExport(deps, ref, ctx)),
  });
  c.watch(d.leader.exports, (e) => (ours(d, e.metadata.namespace) ? [objectKey(e)] : []));
  const byName = (name: string) =>
    d.leader.exports
      .list()
      .filter((e) => e.metadata.name === name && ours(d, e.metadata.namespace))
      .map((e) => objectKey(e));
  c.watch(d.serving.crds, (crd) => byName(crd.metadata!.name!));
  c.watch(d.serving.templates, (t) => byName(`${t.spec.APIServiceSelector.resource}.${t.spec.APIServiceSelector.group ?? ''}`));
  return c;
}
