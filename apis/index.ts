/**
 * What a catalog module needs, from one import (`import { DataService, planMatrix, s } from '..'`): the
 * definitions (`DataService` for plan-based services, `Api` for anything else), plans, the schema builder, and the
 * backend modules' recipe builders for `Api`s.
 */
export * from '../backends';
// Not through backends/index.ts, whose other exports are being reworked beside it; the same module either way.
export * from '../backends/cnpg';
export * from '../backends/cnpg-backup';
export { s, type Schema, type ValidationRule } from '../lib/schema';
export { Api, DefinitionError, type ApiProps, type ApiPermissionClaim, type PrinterColumn } from './api';
export type { ApiVersion, PreviousVersion } from './versions';
export { DataService, type A8sOffering, type A9sOffering, type DataServiceProps, type Parameter, type SpecField } from './dataservice';
export { CLAIM_NAMESPACE, INSTANCE_TYPES, MANAGED_STATE_COLUMN } from './operations';
export { planMatrix, type Plan, type PlanMatrixOptions, type Topology } from './plans';
