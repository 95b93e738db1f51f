/** Cases shared by ServiceBinding, Backup and Restore: references are required and immutable. */
import type { ApiCases, CreateCase, UpdateCase } from './types';

export function operationCases(api: string, spec: Record<string, string>, refs: readonly string[], extra: CreateCase[] = []): ApiCases {
  const create: CreateCase[] = [
    { name: 'a9s', reason: 'the a9s composition', backend: 'a9s', spec: { ...spec, serviceInstanceType: 'mariadb' }, valid: true },
    { name: 'a8s', reason: 'the a8s composition', backend: 'a8s', spec, valid: true },
    { name: 'default composition', reason: 'no compositionRef uses the default', spec, valid: true },
    {
      name: 'unknown instance type',
      reason: 'serviceInstanceType is an enum',
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
    ...['serviceInstanceType', ...refs].map((f) => ({
      name: `no ${f}`,
      reason: `${f} is required`,
      spec: Object.fromEntries(Object.entries(spec).filter(([k]) => k !== f)),
      valid: false,
      error: `spec.${f}`,
    })),
    ...extra,
  ];
  const update: UpdateCase[] = [
    ...[...refs, 'serviceInstanceType'].map((f) => ({
      name: `${f} changed`,
      reason: `${f} is immutable`,
      spec,
      patch: { [f]: f === 'serviceInstanceType' ? 'mongodb' : 'other' },
      valid: false,
      error: `${f} cannot be changed`,
    })),
    {
      name: 'references kept',
      reason: 'an update that keeps every reference passes',
      spec,
      patch: { [refs[0] as string]: spec[refs[0] as string] },
      valid: true,
    },
  ];
  return { api, create, update };
}
