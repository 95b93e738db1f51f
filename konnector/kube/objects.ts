/**
 * The object shape every konnector reconciler reads and writes: any Kubernetes object in its JSON (wire) form, and
 * small pure helpers on its metadata. Reconcilers copy before they change, so cached objects stay untouched.
 */
import type { ObjectMeta, OwnerReference } from '../../exports/bind-api';

export type { ObjectMeta, OwnerReference };

/** Any object as it travels over the wire. */
export interface Obj {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { name: string; managedFields?: ManagedFieldsEntry[] };
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** An object as a list of a built-in kind hands it out: its items leave out apiVersion and kind. */
export interface Listed {
  apiVersion?: string;
  kind?: string;
  metadata: Obj['metadata'];
  [field: string]: unknown;
}

/** A resource the konnector syncs: what a request path needs. */
export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  /** Plural, as in URLs. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export const apiVersionOf = (r: Pick<ResourceRef, 'group' | 'version'>): string => (r.group ? `${r.group}/${r.version}` : r.version);

/** `namespace/name`, or `name` for cluster-scoped objects: the queue key of an object. */
export function keyOf(o: { metadata?: { namespace?: string; name?: string } }): string {
  return o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? '');
}

export const hasFinalizer = (o: { metadata: ObjectMeta }, f: string): boolean => (o.metadata.finalizers ?? []).includes(f);
export const isDeleting = (o: { metadata: ObjectMeta }): boolean =>
  o.metadata.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null;

/**
 * The controller owner reference of an object (at most one may have controller: true). Takes any object whose
 * metadata has owner references (a typed CRD or binding as well as an Obj), so callers need no cast.
 */
export const controllerOf = <R extends { controller?: boolean }>(o: { metadata?: { ownerReferences?: readonly R[] } }): R | undefined =>
  o.metadata?.ownerReferences?.find((r) => r.controller === true);

/** What an owner reference is made of: any typed object with its identity. */
export interface OwnerLike {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly uid?: string };
}

/** An owner reference to `owner`. */
export function ownerReference(owner: OwnerLike, o: { controller?: boolean } = {}): OwnerReference {
  if (!owner.metadata.name) throw new Error(`cannot refer to a ${owner.kind} without a name as its owner`);
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
    ...(o.controller ? { controller: true } : {}),
  };
}

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Whether every field of `part` has the same value in `whole` (objects recursively; arrays and scalars whole). */
export function jsonSubset(part: unknown, whole: unknown): boolean {
  if (part === undefined) return true;
  if (part === null || typeof part !== 'object' || Array.isArray(part)) return jsonEqual(part, whole);
  if (whole === null || typeof whole !== 'object' || Array.isArray(whole)) return false;
  return Object.entries(part as Record<string, unknown>).every(([k, v]) => jsonSubset(v, (whole as Record<string, unknown>)[k]));
}
