/**
 * APIServiceExports follow their CRD: re-derived (derive-export.ts) when the CRD or the offering template changes,
 * deleted when the CRD is deleted. A template that disappears leaves existing exports as they are (the consumer
 * keeps what it bound); it only stops new binds.
 */
import { Controller, objectKey, splitKey, type ReconcileResult } from '../../controller';
import { Annotations, TEMPLATE_API_VERSION, Kinds, type APIServiceExportTemplate } from '../../exports/bind-api';
import { DeriveError, deriveExport, sourceHash } from '../derive-export';
import { findExportable } from '../exportable';
import { cachedExportables } from '../informers';
import { apiMessage, APPLY, BindResources, FIELD_MANAGER, isNotFound } from '../kube';
import type { ControllerDeps } from './deps';

export function exportsController(d: ControllerDeps): Controller {
  const c = new Controller({ name: 'exports', workers: 2, log: d.log, registry: d.registry, reconcile: (key) => reconcileExport(d, key) });
  c.watch(d.leader.exports, (e) => [objectKey(e)]);
  const byName = (name: string) =>
    d.leader.exports
      .list()
      .filter((e) => e.metadata.name === name)
      .map((e) => objectKey(e));
  c.watch(d.serving.crds, (crd) => byName(crd.metadata!.name!));
  c.watch(d.serving.templates, (t) => byName(`${t.spec.APIServiceSelector.resource}.${t.spec.APIServiceSelector.group ?? ''}`));
  return c;
}

export async function reconcileExport(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const { namespace, name } = splitKey(key);
  const exp = d.leader.exports.get(name, namespace);
  if (!exp || exp.metadata.deletionTimestamp) return;
  const r = BindResources.exports;
  const crd = d.serving.crds.get(name);
  if (!crd) {
    await d.clients.custom
      .deleteNamespacedCustomObject({ group: r.group, version: r.version, plural: r.plural, namespace: namespace!, name })
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    d.log.info({ export: key }, 'deleted the export: its CRD is gone');
    return;
  }
  const found = await findExportable(cachedExportables(d.serving), 'Cluster', exp.spec.group, exp.spec.names.plural);
  // Without a template, re-derive with the claims the export already has.
  const template: APIServiceExportTemplate = found?.template ?? {
    apiVersion: TEMPLATE_API_VERSION,
    kind: Kinds.APIServiceExportTemplate,
    metadata: { name, namespace },
    spec: { APIServiceSelector: { group: exp.spec.group, resource: exp.spec.names.plural }, permissionClaims: exp.spec.permissionClaims },
  };
  if (exp.metadata.annotations?.[Annotations.sourceSpecHash] === sourceHash(crd, template)) return;
  let next;
  try {
    next = deriveExport(crd, template, namespace!, exp.spec.informerScope);
  } catch (e) {
    if (e instanceof DeriveError) {
      d.log.error({ export: key, err: e.message }, 'cannot re-derive the export; it stays as it is');
      return;
    }
    throw e;
  }
  try {
    await d.clients.custom.patchNamespacedCustomObject(
      {
        group: r.group,
        version: r.version,
        plural: r.plural,
        namespace: namespace!,
        name,
        body: next,
        fieldManager: FIELD_MANAGER,
        force: true,
      },
      APPLY,
    );
  } catch (e) {
    throw new Error(`cannot apply APIServiceExport ${key}: ${apiMessage(e)}`);
  }
  d.log.info({ export: key }, 're-derived the export from its changed CRD or template');
  return;
}
