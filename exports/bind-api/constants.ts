/**
 * Names of the Klutch bind wire protocol (anynines/klutchio bind v1.5.0). Backend, konnector and CLI must agree on
 * every one of them with the Go implementation, so they are written once, here.
 */

export const BIND_GROUP = 'klutch.anynines.com';
export const BIND_VERSION = 'v1alpha1';
export const BIND_API_VERSION = `${BIND_GROUP}/${BIND_VERSION}`;

/** The example backend's own group, home of APIServiceExportTemplate. */
export const TEMPLATE_GROUP = 'example-backend.klutch.anynines.com';
export const TEMPLATE_VERSION = 'v1alpha1';
export const TEMPLATE_API_VERSION = `${TEMPLATE_GROUP}/${TEMPLATE_VERSION}`;

export const Kinds = {
  APIServiceExport: 'APIServiceExport',
  APIServiceExportRequest: 'APIServiceExportRequest',
  APIServiceNamespace: 'APIServiceNamespace',
  APIServiceBinding: 'APIServiceBinding',
  ClusterBinding: 'ClusterBinding',
  AppClusterBinding: 'AppClusterBinding',
  APIServiceExportTemplate: 'APIServiceExportTemplate',
} as const;
export type BindKind = (typeof Kinds)[keyof typeof Kinds];

/** `kubectl get kube-bindings` lists every bind object. */
export const BIND_CATEGORY = 'kube-bindings';

export const Annotations = {
  /** On an APIServiceExport: hash of the CRD spec it was derived from; a change re-derives the export. */
  sourceSpecHash: 'klutch.anynines.com/source-spec-hash',
  /** On a provider-side copy made by the konnector (value `"true"`): a missing consumer object means delete it. */
  bound: 'klutch.anynines.com/bound',
  /** On claimed Secrets/ConfigMaps: which side (`Provider`/`Consumer`) owns the object. */
  resourceOwner: 'klutch.anynines.com/resource-owner',
  /** On a consumer's cluster namespace in the provider: `<sub>#<cluster id>`, how the backend finds it again. */
  identity: 'example-backend.klutch.anynines.com/identity',
  /** On the provider namespace made for an APIServiceNamespace. */
  apiServiceNamespace: 'klutch.anynines.com/api-service-namespace',
} as const;

/** On consumer objects the spec syncer mirrors: the provider copy is deleted before this is dropped. */
export const SYNCER_FINALIZER = 'klutch.anynines.com/syncer';
/**
 * On an APIServiceBinding: the konnector deletes the binding's objects upstream, then the CRD it owns, before it
 * drops this (the deletion order in the README), so deleting a binding never strands claims behind finalizers. Ours;
 * Klutch's konnector has none.
 */
export const BINDING_FINALIZER = 'klutch.anynines.com/konnector';
/** The server-side-apply field manager the konnector writes provider objects with. */
export const FIELD_MANAGER = 'klutch.anynines.com';
/** The only allowed name of a ClusterBinding (a singleton per cluster namespace). */
export const CLUSTER_BINDING_NAME = 'cluster';
/** The only allowed key of a kubeconfig secret reference. */
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';
