/**
 * Resolves a `Selection` step input (recipe/selection.ts, the Crossplane v2 target) to the `Input` of the composition
 * the composite names in its `from` field — Klutch's `spec.compositionRef.name` —, or of `default` when it names
 * none. Any other input passes through unchanged. The table is data from the Composition: which names exist and
 * what they compose is the operator's, never the function's; a name that is not in it is an error naming the field.
 */
import { INPUT_API_VERSION, SELECTION_KIND } from '../../recipe';
import { get } from '../../lib/fieldpath';

type Obj = Record<string, unknown>;

export type Selected = { readonly ok: true; readonly input: unknown } | { readonly ok: false; readonly error: string };

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';

export function selectInput(raw: unknown, composite: unknown): Selected {
  if (!isObj(raw) || raw.kind !== SELECTION_KIND) return { ok: true, input: raw };
  const service = nonEmpty(raw.service) ? raw.service : 'unknown';
  const bad = (problem: string): Selected => ({
    ok: false,
    error: `cannot validate the Selection input of data service ${service}: ${problem}`,
  });
  if (raw.apiVersion !== INPUT_API_VERSION) return bad(`apiVersion must be ${INPUT_API_VERSION}`);
  if (!nonEmpty(raw.from)) return bad('from must name the composite field that holds the composition name');
  if (!nonEmpty(raw.default)) return bad('default must name a composition');
  if (!isObj(raw.inputs) || Object.keys(raw.inputs).length === 0) return bad('inputs must map composition names to inputs');
  const inputs = raw.inputs;
  const names = Object.keys(inputs).sort();
  if (!isObj(inputs[raw.default])) return bad(`default "${raw.default}" is not one of the inputs (${names.join(', ')})`);
  if (!isObj(composite))
    return { ok: false, error: `cannot select the composition of data service ${service}: the request has no composite` };

  let value: unknown;
  try {
    value = get(composite, raw.from);
  } catch (e) {
    return { ok: false, error: `cannot read ${raw.from} of the composite (data service ${service}): ${(e as Error).message}` };
  }
  if (value === undefined || value === null || value === '') return { ok: true, input: inputs[raw.default] };
  if (typeof value !== 'string' || !isObj(inputs[value])) {
    return {
      ok: false,
      error:
        `cannot select the composition of data service ${service}: ${raw.from} is ${JSON.stringify(value)}, ` +
        `not one of ${names.join(', ')}; set it to one of them or leave it out for ${raw.default}`,
    };
  }
  return { ok: true, input: inputs[value] };
}
