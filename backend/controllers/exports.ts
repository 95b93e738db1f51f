/**
 * APIServiceExports follow their CRD and template: an export whose spec is not what the CRD and the offering template
 * derive (derive-export.ts) — because either changed, or because someone edited the export — is put back; it is
 * deleted when the CRD is deleted. The export's own spec is never an input: its name (`<plural>.<group>`, chosen by
 * the backend) finds the CRD and template. Without a template the export is left as it is (the consumer keeps what
 * it bound; new binds stop), and RBAC never follows an export's spec anyway (controllers/grants.ts).
 */
import { Controller, objectKey, splitKey, type ReconcileResult } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import { DeriveError, deriveExport } from '../derive-export';
import { findExportable } from '../exportable';
import { cachedExportables } from '../informers';
import { apiMessage, BindResources, isNotFound } from '../kube';
import { ours, type ControllerDeps } from './deps';

export function exportsController(d: ControllerDeps): Controller {
  const c = new Controller({ name: 'exports', workers: 2, log: d.log, registry: d.registry, reconcile: (key) => reconcileExport(d, key) });
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

/**
 * Whether the live `have` holds everything of `want`: equal values, arrays of the same length element by element;
 * keys only `have` has are the API server's defaults and pass. (A claim added, removed or changed does not pass.)
 */
export function covers(want: unknown, have: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => covers(w, have[i]));
  if (want && typeof want === 'object') {
    if (!have || typeof have !== 'object' || Array.isArray(have)) return false;
    return Object.entries(want).every(([k, v]) => covers(v, (have as Record<string, unknown>)[k]));
  }
  return want === have;
}

export async function reconcileExport(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const { namespace, name } = splitKey(key);
  const exp = d.leader.exports.get(name, namespace);
  if (!exp || exp.metadata.deletionTimestamp || !namespace) return;
  const r = BindResources.exports;
  const crd = d.serving.crds.get(name);
  if (!crd) {
    await d.clients.custom
      .deleteNamespacedCustomObject({ group: r.group, version: r.version, plural: r.plural, namespace, name })
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    d.log.info({ export: key }, 'deleted the export: its CRD is gone');
    return;
  }
  const dot = name.indexOf('.');
  const found =
    dot > 0 ? await findExportable(cachedExportables(d.serving), 'Cluster', name.slice(dot + 1), name.slice(0, dot)) : undefined;
  if (!found) return; // no template: left as it is
  let next;
  try {
    next = deriveExport(crd, found.template, namespace, d.consumerScope);
  } catch (e) {
    if (e instanceof DeriveError) {
      d.log.error({ export: key, err: e }, 'cannot re-derive the export; it stays as it is');
      return;
    }
    throw e;
  }
  const hash = next.metadata.annotations![Annotations.sourceSpecHash]!;
  if (
    exp.metadata.annotations?.[Annotations.sourceSpecHash] === hash &&
    covers(next.spec, exp.spec) &&
    (exp.spec.permissionClaims?.length ?? 0) === (next.spec.permissionClaims?.length ?? 0)
  )
    return;
  // A replace, not an apply: fields another manager added (a tampered claim) must go too. The status is kept (its
  // own subresource); a conflict retries with the newer version.
  try {
    await d.clients.custom.replaceNamespacedCustomObject({
      group: r.group,
      version: r.version,
      plural: r.plural,
      namespace,
      name,
      body: {
        apiVersion: exp.apiVersion,
        kind: exp.kind,
        metadata: { ...exp.metadata, annotations: { ...exp.metadata.annotations, [Annotations.sourceSpecHash]: hash } },
        spec: next.spec,
      },
    });
  } catch (e) {
    throw new Error(`cannot replace APIServiceExport ${key}: ${apiMessage(e)}`);
  }
  d.log.info({ export: key }, 're-derived the export from its CRD and template');
  return;
}
