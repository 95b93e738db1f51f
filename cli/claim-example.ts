/**
 * "How to create a first claim": a manifest built from the bound API's schema (the APIServiceExport carries it), with
 * every required field set to its default, its first allowed value or a placeholder, so it is valid where the schema
 * alone decides and a starting point where the provider's rules decide more.
 */
import type { APIServiceExport } from '../exports/bind-api';
import { stringify } from 'yaml';

type Schema = {
  type?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
};

function sample(s: Schema | undefined, name: string): unknown {
  if (!s) return {};
  if (s.default !== undefined) return s.default;
  if (s.enum?.length) return s.enum[0];
  switch (s.type) {
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k) => [k, sample(s.properties?.[k], k)]));
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      return `<${name}>`;
  }
}

/** A claim of the export's kind named `name`, in `namespace`. */
export function exampleClaimYaml(exp: APIServiceExport, name: string, namespace: string): string {
  const version = exp.spec.versions.find((v) => v.served && v.storage) ?? exp.spec.versions.find((v) => v.served);
  const schema = version?.schema.openAPIV3Schema as Schema | undefined;
  const spec = sample(schema?.properties?.spec ?? { type: 'object' }, 'spec');
  const claim = {
    apiVersion: `${exp.spec.group}/${version?.name ?? 'v1'}`,
    kind: exp.spec.names.kind,
    metadata: { name, namespace },
    spec,
  };
  return stringify(claim);
}
