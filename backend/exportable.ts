/**
 * What the backend may export: each CRD selected by an APIServiceExportTemplate (in any namespace). With consumer
 * scope Namespaced only namespaced CRDs qualify, since a cluster-scoped resource would need a cluster-wide grant.
 * Read through a source (the API server, or informer caches on a replica that has them).
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { APIServiceExportTemplate } from '../exports/bind-api';
import type { ConsumerScope } from './options';

export interface ExportableSource {
  templates(): Promise<readonly APIServiceExportTemplate[]>;
  crd(name: string): Promise<V1CustomResourceDefinition | undefined>;
}

export interface Exportable {
  readonly group: string;
  readonly resource: string;
  readonly kind: string;
  readonly template: APIServiceExportTemplate;
  readonly crd: V1CustomResourceDefinition;
}

const byName = (t: APIServiceExportTemplate) => `${t.metadata.namespace}/${t.metadata.name}`;

/** Every exportable resource, one per group/resource (the first template by namespace/name wins), sorted. */
export async function exportables(src: ExportableSource, scope: ConsumerScope): Promise<Exportable[]> {
  const seen = new Map<string, Exportable>();
  const templates = [...(await src.templates())].sort((a, b) => byName(a).localeCompare(byName(b)));
  for (const template of templates) {
    const { group = '', resource } = template.spec.APIServiceSelector;
    const key = `${resource}.${group}`;
    if (seen.has(key)) continue;
    const crd = await src.crd(key);
    if (!crd || (scope === 'Namespaced' && crd.spec.scope !== 'Namespaced')) continue;
    seen.set(key, { group, resource, kind: crd.spec.names.kind, template, crd });
  }
  return [...seen.values()].sort((a, b) => `${a.resource}.${a.group}`.localeCompare(`${b.resource}.${b.group}`));
}

/** The exportable of one group/resource, or undefined when no template exports it (or its CRD is missing). */
export async function findExportable(
  src: ExportableSource,
  scope: ConsumerScope,
  group: string,
  resource: string,
): Promise<Exportable | undefined> {
  const templates = [...(await src.templates())]
    .filter((t) => (t.spec.APIServiceSelector.group ?? '') === group && t.spec.APIServiceSelector.resource === resource)
    .sort((a, b) => byName(a).localeCompare(byName(b)));
  const template = templates[0];
  if (!template) return undefined;
  const crd = await src.crd(`${resource}.${group}`);
  if (!crd || (scope === 'Namespaced' && crd.spec.scope !== 'Namespaced')) return undefined;
  return { group, resource, kind: crd.spec.names.kind, template, crd };
}
