/**
 * What the backend may export: each namespaced CRD selected by an APIServiceExportTemplate (in any namespace), in
 * either consumer scope. A cluster-scoped resource is never offered: a consumer could write it only through a
 * cluster-wide grant, which RBAC cannot hold to that consumer's own (prefixed) objects, so one tenant could change or
 * delete another's (Klutch offers them with consumer scope Cluster; our konnector refuses them anyway). Read through a
 * source (the API server, or informer caches on a replica that has them).
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { APIServiceExportTemplate } from '../exports/bind-api';

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
  /** The version asked for (an export request's `versions`); undefined: the template's, or every one it serves. */
  readonly version?: string;
}

const byName = (t: APIServiceExportTemplate) => `${t.metadata.namespace}/${t.metadata.name}`;

/** Every exportable resource, one per group/resource (the first template by namespace/name wins), sorted. */
export async function exportables(src: ExportableSource): Promise<Exportable[]> {
  const seen = new Map<string, Exportable>();
  const templates = [...(await src.templates())].sort((a, b) => byName(a).localeCompare(byName(b)));
  for (const template of templates) {
    const { group = '', resource } = template.spec.APIServiceSelector;
    const key = `${resource}.${group}`;
    if (seen.has(key)) continue;
    const crd = await src.crd(key);
    if (!crd || crd.spec.scope !== 'Namespaced') continue;
    seen.set(key, { group, resource, kind: crd.spec.names.kind, template, crd });
  }
  return [...seen.values()].sort((a, b) => `${a.resource}.${a.group}`.localeCompare(`${b.resource}.${b.group}`));
}

/**
 * The exportable of a group/resource, or undefined: no template exports it (in `version`, when asked for one), its CRD
 * is missing or cluster-scoped. Without a version the first template by namespace/name offers it — the oldest
 * version's, as synth names them (`<plural>`, then `<plural>-<version>`: exports/export-template.ts); with one, the
 * template pinned to that version, else one that pins none.
 */
export async function findExportable(
  src: ExportableSource,
  group: string,
  resource: string,
  version?: string,
): Promise<Exportable | undefined> {
  const templates = await templatesOf(src, group, resource);
  const template = version === undefined ? templates[0] : templateFor(templates, version);
  if (!template) return undefined;
  const crd = await src.crd(`${resource}.${group}`);
  if (!crd || crd.spec.scope !== 'Namespaced') return undefined;
  if (version !== undefined && !crd.spec.versions.some((v) => v.served && v.name === version)) return undefined;
  return { group, resource, kind: crd.spec.names.kind, template, crd, ...(version !== undefined ? { version } : {}) };
}

/** The templates of a group/resource, by namespace/name. */
async function templatesOf(src: ExportableSource, group: string, resource: string): Promise<APIServiceExportTemplate[]> {
  return [...(await src.templates())]
    .filter((t) => (t.spec.APIServiceSelector.group ?? '') === group && t.spec.APIServiceSelector.resource === resource)
    .sort((a, b) => byName(a).localeCompare(byName(b)));
}

/** Of `templates`, the one pinned to `version`, else one that pins none. */
function templateFor(templates: readonly APIServiceExportTemplate[], version: string): APIServiceExportTemplate | undefined {
  return templates.find((t) => t.spec.APIServiceSelector.version === version) ?? templates.find((t) => !t.spec.APIServiceSelector.version);
}

/** A version of an exportable's API an app cluster may ask for (`version` on /bind), and the template offering it. */
export interface OfferedVersion {
  readonly version: string;
  readonly template: APIServiceExportTemplate;
  /** The CRD marks it deprecated. */
  readonly deprecated: boolean;
}

/**
 * The versions of `e`'s API that findExportable offers when asked for one, in the CRD's order: each served version a
 * template pins, or that a template pinning none exports.
 */
export async function offeredVersions(src: ExportableSource, e: Exportable): Promise<OfferedVersion[]> {
  const templates = await templatesOf(src, e.group, e.resource);
  return e.crd.spec.versions.flatMap((v) => {
    const template = v.served ? templateFor(templates, v.name) : undefined;
    return template ? [{ version: v.name, template, deprecated: v.deprecated === true }] : [];
  });
}
