/**
 * Validates a Composition step's input against `inputSchema` before use: Crossplane passes the input through
 * unchecked, so a typo in a hand-edited Composition must fail here, naming the field, not compose something wrong.
 *
 * The schema's structure is checked by ajv. Unknown fields are errors (a misspelled `parmetersTo` would otherwise be
 * ignored silently — Klutch's #101 class of bug). The schema's CEL rules are checked by a small evaluator that knows
 * the two rule shapes `inputSchema` uses; a new shape fails at load time, so it cannot be skipped silently.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { inputSchema, type Input } from '../../recipe';

type Json = Record<string, unknown>;
type Rule = { rule: string; message?: string };
type Check = (self: Json) => boolean;

const has = (o: Json, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k) && o[k] !== undefined;

/** Compiles the rule shapes `inputSchema` uses into predicates. */
function compileRule(rule: string): Check {
  let m = /^self\.(\w+) != '([^']*)' \|\| has\(self\.(\w+)\)$/.exec(rule);
  if (m) {
    const [, field, value, needed] = m as unknown as [string, string, string, string];
    return (self) => self[field] !== value || has(self, needed);
  }
  m = /^has\(self\.(\w+)\) != has\(self\.(\w+)\)$/.exec(rule);
  if (m) {
    const [, a, b] = m as unknown as [string, string, string];
    return (self) => has(self, a) !== has(self, b);
  }
  throw new Error(`validate-input: the input schema has a CEL rule this evaluator does not know: ${rule}; teach compileRule its shape`);
}

interface RuleNode {
  rules: { check: Check; message: string }[];
  properties: Record<string, RuleNode>;
  items?: RuleNode;
}

/** Makes objects closed (unknown fields are errors) and collects the CEL rules, keyed by schema position. */
function prepare(schema: Json): { schema: Json; rules: RuleNode } {
  const node: RuleNode = { rules: [], properties: {} };
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'x-kubernetes-validations') {
      for (const r of v as Rule[]) node.rules.push({ check: compileRule(r.rule), message: r.message ?? `failed rule: ${r.rule}` });
    } else if (k.startsWith('x-kubernetes-')) {
      // Kubernetes extensions mean nothing to ajv; preserve-unknown-fields is handled below.
    } else if (k === 'oneOf' && schema['x-kubernetes-validations']) {
      // For the shipped CRD, which cannot compile the CEL rule beside it; the rule says the same, more clearly.
    } else if (k === 'properties') {
      const props: Json = {};
      for (const [name, sub] of Object.entries(v as Json)) {
        const p = prepare(sub as Json);
        props[name] = p.schema;
        node.properties[name] = p.rules;
      }
      out.properties = props;
    } else if (k === 'items') {
      const p = prepare(v as Json);
      out.items = p.schema;
      node.items = p.rules;
    } else if (k === 'additionalProperties' && typeof v === 'object' && v !== null) {
      out.additionalProperties = prepare(v as Json).schema;
    } else {
      out[k] = v;
    }
  }
  if (
    out.type === 'object' &&
    out.properties &&
    out.additionalProperties === undefined &&
    !schema['x-kubernetes-preserve-unknown-fields']
  ) {
    out.additionalProperties = false;
  }
  return { schema: out, rules: node };
}

function walkRules(value: unknown, node: RuleNode, path: string, errors: string[]): void {
  if (Array.isArray(value)) {
    if (node.items) value.forEach((v, i) => walkRules(v, node.items as RuleNode, `${path}[${i}]`, errors));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const r of node.rules) if (!r.check(value as Json)) errors.push(`${path || '<root>'}: ${r.message}`);
  for (const [k, sub] of Object.entries(node.properties)) {
    if (has(value as Json, k)) walkRules((value as Json)[k], sub, path ? `${path}.${k}` : k, errors);
  }
}

/** `/fields/0/from` → `fields[0].from`. */
export function fieldPathOf(instancePath: string): string {
  let out = '';
  for (const raw of instancePath.split('/').slice(1)) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (/^[0-9]+$/.test(seg)) out += `[${seg}]`;
    else if (/[.[\]]/.test(seg)) out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}

function describeError(e: ErrorObject): string {
  let path = fieldPathOf(e.instancePath);
  let msg = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    path = path ? `${path}.${extra}` : extra;
    msg = 'is not a field of the input';
  } else if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    path = path ? `${path}.${missing}` : missing;
    msg = 'is required';
  } else if (e.keyword === 'enum') {
    msg = `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${path || '<root>'}: ${msg}`;
}

let compiled: { validate: ValidateFunction; rules: RuleNode } | undefined;

function compile(): { validate: ValidateFunction; rules: RuleNode } {
  if (!compiled) {
    const { schema, rules } = prepare(inputSchema.toJSON() as unknown as Json);
    const ajv = new Ajv({ allErrors: true, strict: false });
    compiled = { validate: ajv.compile(schema), rules };
  }
  return compiled;
}

export type InputValidation = { readonly ok: true; readonly input: Input } | { readonly ok: false; readonly errors: readonly string[] };

/** Checks a step input; errors are `<field path>: <problem>`, sorted, at most one per path and problem. */
export function validateInput(input: unknown): InputValidation {
  const { validate, rules } = compile();
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: ["<root>: the step has no input object; set the step's input to a dataservices Input"] };
  }
  // A Composition may give the input object metadata (the CRD allows it); it carries nothing the function reads.
  const { metadata, ...body } = input as Json;
  const errors: string[] = [];
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)))
    errors.push('metadata: must be object');
  if (!validate(body)) errors.push(...(validate.errors ?? []).map(describeError));
  walkRules(body, rules, '', errors);
  if (errors.length > 0) return { ok: false, errors: [...new Set(errors)].sort() };
  return { ok: true, input: body as unknown as Input };
}
