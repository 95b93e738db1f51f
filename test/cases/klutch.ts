/**
 * Claims a Klutch user writes, derived from Klutch's own XRDs (schemas/klutch-crossplane-api/): every service version
 * with every plan, on every composition of the API. Whether Klutch accepts each one is stated here from its rules
 * (`accepts`); test/cluster/claims.test.ts sends each claim to Klutch's XRD and ours on a real API server and requires
 * both to agree with it, and the offline suites check ours.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Backend } from '../../recipe';
import type { CreateCase } from './types';

const KLUTCH_DIR = join(import.meta.dirname, '..', '..', 'schemas', 'klutch-crossplane-api');

/** The `service` and `plan` enums of one of Klutch's XRD files (`a9s/mariadb/definition.yaml`). */
export function klutchEnums(file: string): { services: string[]; plans: string[] } {
  const xrd = parse(readFileSync(join(KLUTCH_DIR, file), 'utf8')) as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, { enum?: string[] }> } } } } }[] };
  };
  const props = xrd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties;
  return { services: props.service?.enum ?? [], plans: props.plan?.enum ?? [] };
}

export interface ServicePlanClaims {
  readonly services: readonly string[];
  readonly plans: readonly string[];
  /** The compositions to name; `undefined` leaves compositionRef out. @default [undefined] */
  readonly backends?: readonly (Backend | undefined)[];
  /** Whether Klutch accepts the claim. @default always */
  readonly accepts?: (service: string, plan: string, backend: Backend | undefined) => boolean;
  /** What the error names when Klutch refuses. */
  readonly error?: (service: string, plan: string, backend: Backend | undefined) => string;
}

/** One create case per service, plan and composition, named `klutch <service> <plan> [<backend>]`. */
export function servicePlanClaims(o: ServicePlanClaims): CreateCase[] {
  const out: CreateCase[] = [];
  for (const backend of o.backends ?? [undefined]) {
    for (const service of o.services) {
      for (const plan of o.plans) {
        const valid = o.accepts?.(service, plan, backend) ?? true;
        out.push({
          name: `klutch ${service} ${plan}${backend ? ` ${backend}` : ''}`,
          reason: "a service and plan of Klutch's XRD",
          ...(backend ? { backend } : {}),
          spec: { service, plan },
          valid,
          ...(!valid && o.error ? { error: o.error(service, plan, backend) } : {}),
        });
      }
    }
  }
  return out;
}
