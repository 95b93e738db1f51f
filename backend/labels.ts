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
  /** On a namespace made for an APIServiceNamespace: the cluster namespace it belongs to. */
  clusterNamespace: `${P}/cluster-namespace`,
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export const MANAGED_BY = 'klutch-kit-backend';

export const BackendAnnotations = {
  /** On the kubeconfig Secret: when its token expires (RFC 3339), from the TokenRequest's status. */
  tokenExpires: `${P}/token-expires`,
  /** On the kubeconfig Secret: hash of the server, CA, server name and namespace it was written for. */
  kubeconfigFor: `${P}/kubeconfig-for`,
} as const;
