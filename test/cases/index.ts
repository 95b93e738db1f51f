/**
 * The one loader of claim cases, used by every claims suite (offline schema, crank with CEL, the real API server):
 * per API, default cases generated from its definition, plus the cases of `test/cases/<api>.cases.ts` when that
 * file exists. So a new API is tested as soon as it is in the catalog; a cases file adds what only it knows.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Api } from '../../apis/api';
import type { JSONSchemaProps } from '../../lib/schema';
import type { ApiCases, CreateCase, UpdateCase } from './types';

const DIR = join(import.meta.dirname, '.');

/** The cases for every API, in catalog order; fails on a cases file for an API the catalog does not have. */
export async function loadCases(apis: readonly Api[]): Promise<ApiCases[]> {
  const out: ApiCases[] = [];
  for (const api of apis) {
    const gen = defaultCases(api);
    const file = join(DIR, `${api.name}.cases.ts`);
    const own = existsSync(file) ? ((await import(file)) as { default: ApiCases }).default : undefined;
    if (own && own.api !== api.name) throw new Error(`test/cases/${api.name}.cases.ts: its api is "${own.api}"; make it "${api.name}"`);
    out.push({ api: api.name, create: [...gen.create, ...(own?.create ?? [])], update: [...gen.update, ...(own?.update ?? [])] });
  }
  return out;
}

/** A value of a schema's type that is not valid for it, for "wrong type" cases. */
function wrongType(schema: JSONSchemaProps): unknown {
  return schema.type === 'string' ? 42 : 'not-a-' + (schema.type ?? 'value');
}

/**
 * What every API's schema must do, derived from its definition: accept each backend's example; refuse an unknown
 * field, each missing required field, a wrong type and an enum value it does not list; accept an unchanged update;
 * refuse a change to each immutable field (`self == oldSelf`) where the example sets it.
 */
export function defaultCases(api: Api): ApiCases {
  const spec = api.spec.toJSON();
  const props = spec.properties ?? {};
  const create: CreateCase[] = [];
  const update: UpdateCase[] = [];
  const reason = 'generated from the definition (test/cases/index.ts)';
  for (const backend of api.backendNames) {
    const example = api.examples[backend] as Record<string, unknown>;
    const c = (name: string, s: Record<string, unknown>, valid: boolean, error?: string) =>
      create.push({ name: `default: ${backend} ${name}`, reason, backend, spec: s, valid, ...(error ? { error } : {}) });
    c('example', example, true);
    c('unknown field', { ...example, notAField: true }, false, 'notAField');
    for (const r of spec.required ?? []) {
      const { [r]: _, ...rest } = example;
      c(`without ${r}`, rest, false, `spec.${r}`);
    }
    for (const [name, p] of Object.entries(props)) {
      if (example[name] === undefined) continue;
      c(`${name} of the wrong type`, { ...example, [name]: wrongType(p) }, false, name);
      if (p.enum) c(`${name} not in its enum`, { ...example, [name]: 'not-in-the-enum' }, false, name);
      const immutable = (p['x-kubernetes-validations'] ?? []).find((v) => v.rule === 'self == oldSelf');
      const other = p.enum?.find((v) => v !== example[name]) ?? (p.type === 'string' && !p.enum ? `${String(example[name])}-2` : undefined);
      if (immutable && other !== undefined) {
        update.push({
          name: `default: ${backend} ${name} changed`,
          reason,
          backend,
          spec: example,
          patch: { [name]: other },
          valid: false,
          error: immutable.message,
        });
      }
    }
    update.push({ name: `default: ${backend} unchanged`, reason, backend, spec: example, patch: {}, valid: true });
  }
  return { api: api.name, create, update };
}
