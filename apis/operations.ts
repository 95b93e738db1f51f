/** Recipe pieces shared across the catalog: status mappings, and what the APIs acting on an instance have in common. */
import type { PrinterColumn } from './api';
import type { FieldMapping, StatusMapping } from './mapping';

/** The data services an operation can target (`serviceInstanceType`), Klutch's list. */
export const INSTANCE_TYPES = ['keyvalue', 'postgresql', 'mongodb', 'search', 'logme2', 'prometheus', 'messaging', 'mariadb'];

/** The claim's namespace, from the label Crossplane puts on the composite. */
export const CLAIM_NAMESPACE = 'metadata.labels[crossplane.io/claim-namespace]';

export const MANAGED_STATE_COLUMN: PrinterColumn = { name: 'ManagedResource', type: 'string', jsonPath: '.status.managed.state' };

/** provider-anynines `status.atProvider.<f>` → `status.managed.<f>`, plus the MR's conditions. */
export function managedStatus(fields: readonly string[]): StatusMapping[] {
  return [
    ...fields.map((f) => ({ from: `status.atProvider.${f}`, to: `status.managed.${f}` })),
    { from: 'status.conditions', to: 'status.managed.conditions' },
  ];
}

/** provider-kubernetes Object: the wrapped a8s object's observed status and the Object's conditions. */
export const A8S_STATUS: readonly StatusMapping[] = [
  { from: 'status.atProvider.manifest.status', to: 'status.managed' },
  { from: 'status.conditions', to: 'status.managed.conditions' },
];

/** An a8s object reference (`apiVersion`, `kind`, `name`) to the PostgreSQL instance the claim names. */
export function a8sPostgresqlRef(at: string): FieldMapping[] {
  return [
    { to: `${at}.apiVersion`, value: 'postgresql.anynines.com/v1beta3' },
    { to: `${at}.kind`, value: 'Postgresql' },
    { from: 'spec.instanceRef', to: `${at}.name`, required: true },
  ];
}

/** The a8s backup manager's `spec.serviceInstance` (`apiGroup`, `kind`, `name`). */
export function a8sPostgresqlService(): FieldMapping[] {
  return [
    { to: 'spec.serviceInstance.apiGroup', value: 'postgresql.anynines.com' },
    { to: 'spec.serviceInstance.kind', value: 'Postgresql' },
    { from: 'spec.instanceRef', to: 'spec.serviceInstance.name', required: true },
  ];
}
