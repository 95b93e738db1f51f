/**
 * What a consumer was granted, from operator-owned inputs only: each APIServiceExport in its cluster namespace names
 * an exported resource (`<plural>.<group>`: exports are made by the backend only, the consumer cannot create them),
 * whose kind comes from the CRD and whose claims come from the template that offers it — never from the export's
 * spec. Without a template the resource stays granted (the consumer keeps what it bound) but claims nothing.
 */
import type { APIServiceExportTemplate } from '../../exports/bind-api';
import type { ExportGrant } from '../provision/claimed';
import type { ControllerDeps } from './deps';

const byName = (t: APIServiceExportTemplate) => `${t.metadata.namespace}/${t.metadata.name}`;

export function consumerGrants(d: Pick<ControllerDeps, 'leader' | 'serving'>, clusterNamespace: string): ExportGrant[] {
  const templates = [...d.serving.templates.list()].sort((a, b) => byName(a).localeCompare(byName(b)));
  const grants: ExportGrant[] = [];
  for (const e of d.leader.exports.list(clusterNamespace)) {
    const name = e.metadata.name ?? '';
    const dot = name.indexOf('.');
    if (dot < 1) continue;
    const resource = name.slice(0, dot);
    const group = name.slice(dot + 1);
    // The first template by namespace/name wins, as exportable.ts decides what is offered.
    const template = templates.find(
      (t) => (t.spec.APIServiceSelector.group ?? '') === group && t.spec.APIServiceSelector.resource === resource,
    );
    const crd = d.serving.crds.get(name);
    grants.push({ group, resource, kind: crd?.spec.names.kind, claims: template?.spec.permissionClaims ?? [] });
  }
  return grants.sort((a, b) => `${a.resource}.${a.group}`.localeCompare(`${b.resource}.${b.group}`));
}

/** The version informers list a CRD's objects at: its storage version, else the first served. */
export function storageVersion(d: Pick<ControllerDeps, 'serving'>, name: string): string | undefined {
  const versions = d.serving.crds.get(name)?.spec.versions ?? [];
  return (versions.find((v) => v.storage) ?? versions.find((v) => v.served))?.name;
}
