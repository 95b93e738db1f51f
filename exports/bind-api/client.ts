/**
 * The one bind-API client surface the backend and the konnector share: where each bind kind lives (read from its CRD,
 * so no plural is spelled twice) and the calls they make on bind objects through client-node's CustomObjectsApi —
 * read, list, create, server-side apply under a field manager, replace, a merge patch of status or metadata, delete by uid.
 * "Gone already" and "exists already" are answers, not errors: a read says undefined, a delete or status write of a
 * gone object is done, a create of an existing one says undefined.
 */
import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import { isConflict, isNotFound } from '../../lib/kube-errors';
import { apiServiceBindingCrd } from './apiservice-binding';
import { apiServiceExportCrd } from './apiservice-export';
import { apiServiceExportRequestCrd } from './apiservice-export-request';
import { apiServiceExportTemplateCrd } from './apiservice-export-template';
import { apiServiceNamespaceCrd } from './apiservice-namespace';
import { appClusterBindingCrd } from './app-cluster-binding';
import { clusterBindingCrd } from './cluster-binding';

export interface BindResource {
  readonly group: string;
  readonly version: string;
  /** As in URLs and RBAC. */
  readonly plural: string;
  readonly kind: string;
}

interface CrdLike {
  spec: { group: string; names: { plural: string; kind: string }; versions: { name: string; storage?: boolean }[] };
}

function resourceOf(crd: Record<string, unknown>): BindResource {
  const { group, names, versions } = (crd as unknown as CrdLike).spec;
  const storage = versions.find((v) => v.storage) ?? versions[0]!;
  return { group, version: storage.name, plural: names.plural, kind: names.kind };
}

/** Where the bind kinds live. */
export const BindResources = {
  exports: resourceOf(apiServiceExportCrd()),
  exportRequests: resourceOf(apiServiceExportRequestCrd()),
  serviceNamespaces: resourceOf(apiServiceNamespaceCrd()),
  bindings: resourceOf(apiServiceBindingCrd()),
  clusterBindings: resourceOf(clusterBindingCrd()),
  appClusterBindings: resourceOf(appClusterBindingCrd()),
  templates: resourceOf(apiServiceExportTemplateCrd()),
} as const;

/** The CRD a bind resource needs, by name (for "install it" messages). */
export const crdName = (r: Pick<BindResource, 'group' | 'plural'>): string => `${r.plural}.${r.group}`;

/** The URL path of a resource's collection (all namespaces without `namespace`). */
export const bindPath = (r: Pick<BindResource, 'group' | 'version' | 'plural'>, namespace?: string): string =>
  `${r.group ? `/apis/${r.group}` : '/api'}/${r.version}${namespace ? `/namespaces/${namespace}` : ''}/${r.plural}`;

/** Options that make a patch call a server-side apply, a merge patch, a JSON patch: the one set every side uses. */
export const APPLY_PATCH = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** A namespaced bind object's name. */
export interface BindRef {
  readonly namespace: string;
  readonly name: string;
}

const goneIsDone = (e: unknown): undefined => {
  if (!isNotFound(e)) throw e;
  return undefined;
};

/** The calls on one bind resource. */
export interface BindObjects<T> {
  /** The object, live (undefined: not found). */
  get(ref: BindRef): Promise<T | undefined>;
  /** The objects in `namespace` (in every namespace without one), live. */
  list(namespace?: string): Promise<T[]>;
  /**
   * Creates `obj` (named by its metadata, or by `metadata.generateName`); one that exists already is left as it is
   * and the answer is undefined.
   */
  create(obj: T & { metadata: { namespace?: string; name?: string } }): Promise<T | undefined>;
  /** Server-side apply of `obj` (named by its metadata) under `fieldManager`, forced. */
  apply(obj: T & { metadata: { namespace?: string; name?: string } }, fieldManager: string): Promise<T>;
  /** Replaces the object (fields others added go too); a stale resourceVersion is a conflict. */
  replace(obj: T & { metadata: { namespace?: string; name?: string } }): Promise<T>;
  /** Merge-patches the status; a gone object is done. */
  patchStatus(ref: BindRef, status: unknown): Promise<void>;
  /** Merge-patches the object (metadata, spec); a gone object is done. */
  patch(ref: BindRef, body: unknown): Promise<void>;
  /** Deletes the object (only this uid, when given); gone already is done. */
  delete(ref: BindRef, uid?: string): Promise<void>;
}

const refOf = (o: { metadata: { namespace?: string; name?: string } }, r: BindResource): BindRef => {
  if (!o.metadata.namespace || !o.metadata.name) throw new Error(`a ${r.kind} needs metadata.namespace and metadata.name`);
  return { namespace: o.metadata.namespace, name: o.metadata.name };
};

const namespaceOf = (o: { metadata: { namespace?: string } }, r: BindResource): string => {
  if (!o.metadata.namespace) throw new Error(`a ${r.kind} needs metadata.namespace`);
  return o.metadata.namespace;
};

/** The calls on bind resource `r` through `custom`. */
export function bindObjects<T>(custom: CustomObjectsApi, r: BindResource): BindObjects<T> {
  const base = { group: r.group, version: r.version, plural: r.plural };
  return {
    get: (ref) => custom.getNamespacedCustomObject({ ...base, ...ref }).then((o) => o as T, goneIsDone),
    list: async (namespace) =>
      (
        (await (namespace === undefined
          ? custom.listClusterCustomObject(base)
          : custom.listNamespacedCustomObject({ ...base, namespace }))) as {
          items: T[];
        }
      ).items,
    // async: an object without a namespace is a rejected promise like every other failure, not a throw.
    create: async (obj) =>
      custom.createNamespacedCustomObject({ ...base, namespace: namespaceOf(obj, r), body: obj }).then(
        (o) => o as T,
        (e: unknown) => {
          if (!isConflict(e)) throw e;
          return undefined;
        },
      ),
    apply: async (obj, fieldManager) =>
      (await custom.patchNamespacedCustomObject({ ...base, ...refOf(obj, r), body: obj, fieldManager, force: true }, APPLY_PATCH)) as T,
    replace: async (obj) => (await custom.replaceNamespacedCustomObject({ ...base, ...refOf(obj, r), body: obj })) as T,
    patchStatus: (ref, status) =>
      custom.patchNamespacedCustomObjectStatus({ ...base, ...ref, body: { status } }, MERGE_PATCH).then(() => undefined, goneIsDone),
    patch: (ref, body) => custom.patchNamespacedCustomObject({ ...base, ...ref, body }, MERGE_PATCH).then(() => undefined, goneIsDone),
    delete: (ref, uid) =>
      custom
        .deleteNamespacedCustomObject({ ...base, ...ref, ...(uid ? { body: { preconditions: { uid } } } : {}) })
        .then(() => undefined, goneIsDone),
  };
}
