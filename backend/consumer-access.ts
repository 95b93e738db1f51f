/**
 * What a consumer (an app cluster's konnector) may see on the control plane: the two settings the flags choose
 * (`--consumer-scope`, `--claimed-access`, backend/options.ts) and the controllers, provisioning and the deploy
 * construct read. Apart from the flag table so that they import two types, not the command-line parser.
 */

/** Where a consumer's claims live: in its provider namespaces (Namespaced), or cluster-wide (Cluster). */
export type ConsumerScope = 'Namespaced' | 'Cluster';

/** How a consumer reads claimed objects in its provider namespaces: by name (Role klutch-binder-claimed), or all of them. */
export type ClaimedAccess = 'Object' | 'Namespace';
