/**
 * The backend's own labels and annotations (Klutch's are in exports/bind-api/constants.ts). Labels make the objects
 * the backend made findable by a selector; the values Klutch looks at stay in Klutch's annotations.
 */
const P = 'klutch-kit.anynines.com';

export const Labels = {
  /** On a cluster namespace: the identity's hash (an identity `<sub>#<cid>` is no label value). */
  identityHash: `${P}/identity-hash`,
  /** On the provider-side kubeconfig Secret (`"true"`): the token rotation watches these. */
  kubeconfig: `${P}/kubeconfig`,
  /** On a cluster namespace: the hash of the identity's subject (`<sub>`), to count a subject's clusters. */
  subjectHash: `${P}/subject-hash`,
  /** On a namespace made for an APIServiceNamespace: the cluster namespace it belongs to. */
  clusterNamespace: `${P}/cluster-namespace`,
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export const MANAGED_BY = 'klutch-kit-backend';

export const BackendAnnotations = {
  /** On the kubeconfig Secret: when its token expires (RFC 3339), from the TokenRequest's status. */
  tokenExpires: `${P}/token-expires`,
  /** On the kubeconfig Secret: when its token was issued (RFC 3339); a Klutch legacy token is revoked after it. */
  tokenIssued: `${P}/token-issued`,
  /** On the kubeconfig Secret: hash of the server, CA, server name and namespace it was written for. */
  kubeconfigFor: `${P}/kubeconfig-for`,
  /** On a ClusterBinding: when the consumer last bound (RFC 3339); a bind counts as activity, like a heartbeat. */
  lastBind: `${P}/last-bind`,
  /**
   * On a ClusterBinding: `<heartbeat> <seen>`, a lastHeartbeatTime dated in the future and when the backend first saw
   * it (RFC 3339 both). The consumer writes the heartbeat's time; such a one counts as sent when it was seen.
   */
  futureHeartbeat: `${P}/future-heartbeat`,
  /**
   * On an APIServiceExport: the version its request asked for (`spec.resources[].versions`), kept when the export is
   * re-derived, so an app cluster that bound a newer version of an API stays on it. Written by the backend only (a
   * consumer writes an export's status alone).
   */
  exportVersion: `${P}/version`,
  /** On a ClusterBinding: when the consumer first had an export; without, it is cleaned up after --unbound-consumer-ttl. */
  firstExport: `${P}/first-export`,
  /**
   * On a cluster namespace this backend created (`"true"`), not adopted from Klutch's backend: it never held a legacy
   * token, so the adoption controller need not look for one.
   */
  provisioned: `${P}/provisioned`,
  /** On a cluster namespace adopted from Klutch's backend: when (RFC 3339); its legacy token goes --legacy-token-max-age after. */
  adopted: `${P}/adopted`,
} as const;

/**
 * Pod Security Admission. Cluster namespaces hold only bind objects: `restricted`. Provider namespaces get the claims,
 * and data-service operators may run Pods there (a8s puts instance Pods beside the claim): `baseline` is enforced,
 * `restricted` only warned and audited, since enforcing it could break an operator's Pods.
 */
export const PodSecurity = {
  clusterNamespace: { 'pod-security.kubernetes.io/enforce': 'restricted' },
  providerNamespace: {
    'pod-security.kubernetes.io/enforce': 'baseline',
    'pod-security.kubernetes.io/warn': 'restricted',
    'pod-security.kubernetes.io/audit': 'restricted',
  },
} as const;
