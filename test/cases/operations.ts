/** Cases shared by ServiceBinding, Backup and Restore: references are names, the instance type is an enum. */
import type { ApiCases, CreateCase, UpdateCase } from './types';

export interface OperationCases {
  /** A valid spec for the a8s composition (PostgreSQL). */
  readonly spec: Record<string, string>;
  /** Reference fields (the first is changed in the update cases). */
  readonly refs: readonly string[];
  /** Fields the schema requires (a missing one names `spec.<field>`). */
  readonly required: readonly string[];
  /** What the a8s composition refuses for any type but postgresql (a piece of the message). */
  readonly a8sPostgresqlOnly: string;
  readonly extra?: readonly CreateCase[];
}

export function operationCases(api: string, o: OperationCases): ApiCases {
  const { spec, refs } = o;
  const create: CreateCase[] = [
    { name: 'a9s', reason: 'the a9s composition', backend: 'a9s', spec: { ...spec, serviceInstanceType: 'mariadb' }, valid: true },
    { name: 'a8s', reason: 'the a8s composition', backend: 'a8s', spec, valid: true },
    { name: 'default composition', reason: 'no compositionRef uses the default', spec, valid: true },
    {
      name: 'a8s, not postgresql',
      reason: 'the a8s composition serves PostgreSQL only (Klutch rule)',
      backend: 'a8s',
      spec: { ...spec, serviceInstanceType: 'mongodb' },
      valid: false,
      error: o.a8sPostgresqlOnly,
    },
    {
      name: 'default composition, not postgresql',
      reason: 'the default composition is a8s',
      spec: { ...spec, serviceInstanceType: 'keyvalue' },
      valid: false,
      error: o.a8sPostgresqlOnly,
    },
    ...['keyvalue', 'postgresql', 'mongodb', 'search', 'logme2', 'prometheus', 'messaging', 'mariadb'].map((type) => ({
      name: `a9s ${type}`,
      reason: "every instance type of Klutch's enum on a9s",
      backend: 'a9s' as const,
      spec: { ...spec, serviceInstanceType: type },
      valid: true,
    })),
    {
      name: 'unknown instance type',
      reason: 'serviceInstanceType is an enum',
      backend: 'a9s',
      spec: { ...spec, serviceInstanceType: 'redis' },
      valid: false,
      error: 'serviceInstanceType',
    },
    {
      name: 'unknown field',
      reason: 'unknown fields are rejected',
      spec: { ...spec, instanceName: 'x' },
      valid: false,
      error: 'instanceName',
    },
    {
      name: 'reference as object',
      reason: 'references are names',
      spec: { ...spec, [refs[0] as string]: { name: 'x' } },
      valid: false,
      error: refs[0],
    },
    ...o.required.map((f) => ({
      name: `no ${f}`,
      reason: `${f} is required`,
      backend: 'a9s' as const,
      spec: Object.fromEntries(Object.entries(spec).filter(([k]) => k !== f)),
      valid: false,
      error: `spec.${f}`,
    })),
    ...(o.extra ?? []),
  ];
  const update: UpdateCase[] = [
    {
      name: 'reference changed',
      reason: 'Klutch lets references change (the backend objects follow)',
      backend: 'a9s',
      spec,
      patch: { [refs[0] as string]: 'other' },
      valid: true,
    },
    {
      name: 'instance type changed',
      reason: 'Klutch lets the instance type change on a9s',
      backend: 'a9s',
      spec,
      patch: { serviceInstanceType: 'mongodb' },
      valid: true,
    },
    {
      name: 'a8s instance type changed',
      reason: 'the a8s composition serves PostgreSQL only',
      backend: 'a8s',
      spec,
      patch: { serviceInstanceType: 'mongodb' },
      valid: false,
      error: o.a8sPostgresqlOnly,
    },
  ];
  return { api, create, update };
}
