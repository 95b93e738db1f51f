/** What the APIs acting on an instance (ServiceBinding, Backup, Restore) and the instances share. */
import type { PrinterColumn } from '../lib/crd-manifest';

/** The data services an operation can target (`serviceInstanceType`), Klutch's list. */
export const INSTANCE_TYPES = ['keyvalue', 'postgresql', 'mongodb', 'search', 'logme2', 'prometheus', 'messaging', 'mariadb'];

/**
 * The claim's namespace, from the label Crossplane puts on a v1 composite. On a namespaced (v2) composite that label
 * is the author's to write, so the function reads this path as the composite's own namespace (trustedComposite).
 */
export const CLAIM_NAMESPACE = 'metadata.labels[crossplane.io/claim-namespace]';

export const MANAGED_STATE_COLUMN: PrinterColumn = { name: 'ManagedResource', type: 'string', jsonPath: '.status.managed.state' };
