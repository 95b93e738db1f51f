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
  /**
   * On a bound object upstream, written by our konnector (Klutch's writes none): the receipt
   * (lib/credentials-receipt.ts) of the credentials Secret it last copied into the app cluster for that object. A
   * rotation's overlap counts from when it names the new credentials. Under the reserved prefix, so an app team's
   * claim cannot carry it up.
   */
  credentialsReceived: 'klutch.anynines.com/credentials-received',
} as const;

/**
 * On the APIServiceExportTemplates of an API served in several versions (synth writes it) and on an APIServiceExport
 * of a version the control plane does not store (the backend copies it there): JSON `{"storageVersion": "v2",
 * "conversions": [...]}`, the API's neighbour conversions (lib/conversion.ts). Our konnector then reads and writes
 * the control plane in the storage version and converts between it and the app cluster's version itself, spec up
 * and status down; Klutch's konnector ignores it, and the control plane's conversion webhook converts for it. Ours.
 */
export const EXPORT_CONVERSION_ANNOTATION = 'klutch-kit.anynines.com/conversion';

/** On consumer objects the spec syncer mirrors: the provider copy is deleted before this is dropped. */
export const SYNCER_FINALIZER = 'klutch.anynines.com/syncer';
/**
 * On an APIServiceBinding: the konnector deletes the binding's objects upstream, then the CRD it owns, before it
 * drops this (the deletion order in docs/konnector.md), so deleting a binding never strands claims behind finalizers. Ours;
 * Klutch's konnector has none.
 */
export const BINDING_FINALIZER = 'klutch.anynines.com/konnector';
/** The server-side-apply field manager the konnector writes with (Klutch's syncer's, so it takes over Klutch's fields). */
export const SYNCER_FIELD_MANAGER = 'klutch.anynines.com';
/** The only allowed name of a ClusterBinding (a singleton per cluster namespace). */
export const CLUSTER_BINDING_NAME = 'cluster';
/** The only allowed key of a kubeconfig secret reference. */
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';

/**
 * Per-object access to claimed objects (Secrets, ConfigMaps) on the provider. In every provider namespace made for an
 * APIServiceNamespace the backend keeps a Role of this name (and a RoleBinding of the same name for the consumer's
 * ServiceAccount) granting get/list/watch on exactly the objects a permission claim shares — by `resourceNames` —
 * and nothing else of those resources. The consumer may read this Role (get/list/watch by name), so a konnector
 * learns which objects it may read; list and watch of a shared object need `fieldSelector=metadata.name=<name>`.
 */
export const CLAIMED_ROLE = 'klutch-binder-claimed';

/**
 * Label and annotation prefixes that belong to the platform, never to the other side of a binding: nothing the
 * konnector copies across (spec up, claimed objects down) carries keys under them, except the marks the konnector
 * sets itself. `crossplane.io/claim-namespace` set by an app developer must not reach Crossplane.
 */
const RESERVED_PREFIXES = ['crossplane.io/', 'kubernetes.io/', 'k8s.io/', 'klutch.anynines.com/'] as const;

/** Whether a label or annotation key is under a reserved prefix (`crossplane.io/x`, `x.crossplane.io/y`, ...). */
export function isReservedKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const prefix = key.slice(0, slash + 1);
  // Kubernetes' recommended labels (app.kubernetes.io/name, ...) are the app's own, by Kubernetes' own rule.
  if (prefix === 'app.kubernetes.io/') return false;
  return RESERVED_PREFIXES.some((r) => prefix === r || prefix.endsWith(`.${r}`));
}

/** `labels` (or annotations) without reserved keys; undefined when nothing is left. */
export function withoutReservedKeys(labels: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (!labels) return undefined;
  const out = Object.fromEntries(Object.entries(labels).filter(([k]) => !isReservedKey(k)));
  return Object.keys(out).length ? out : undefined;
}

/**
 * What Klutch's Compositions name a claim's connection Secret (`writeConnectionSecretToRef`, in the claim's
 * namespace): `<claim>-creds`. The backend grants the konnector read access to it and the konnector copies it down.
 */
const CREDENTIALS_SUFFIX = '-creds';

/** The claim a connection Secret named `<claim>-creds` belongs to; undefined for any other name. */
export function claimOfCredentials(secretName: string): string | undefined {
  return secretName.length > CREDENTIALS_SUFFIX.length && secretName.endsWith(CREDENTIALS_SUFFIX)
    ? secretName.slice(0, -CREDENTIALS_SUFFIX.length)
    : undefined;
}
