/**
 * The input of the dataservices composition function: the contract between the Compositions that `npm run synth`
 * writes and the function that reads them. Both sides import this module; it imports only lib/.
 *
 * An `Input` is a recipe (recipe.ts) plus the backend and service it is for. Crossplane does not validate a step's
 * input, so the function validates it against `inputSchema` (shipped as a CRD in the Function package) before use.
 */
import { s, type Schema } from '../lib/schema';
import { TRANSFORM_TYPES, type Backend, type Companion, type FieldMapping, type Recipe, type Transform, type Wrapper } from './recipe';

export const INPUT_GROUP = 'dataservices.fn.klutch.anynines.com';
export const INPUT_VERSION = 'v1beta1';
export const INPUT_API_VERSION = `${INPUT_GROUP}/${INPUT_VERSION}` as const;
export const INPUT_KIND = 'Input' as const;

/** A Composition step's input: a recipe as it reads on one target, and the backend and service it composes. */
export interface Input extends Omit<Recipe, 'v2'> {
  readonly apiVersion: typeof INPUT_API_VERSION;
  readonly kind: typeof INPUT_KIND;
  /** The backend that composes the resource (`a9s`, `a8s`), for names and messages. */
  readonly backend: Backend;
  /** The data service, for names and messages (`postgresql`). */
  readonly service: string;
}

export interface InputForOptions {
  readonly backend: Backend;
  readonly service: string;
  /** Values of the recipe's settings (`a9s.organizationGuid` → GUID); a setting missing here takes its default. */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** The Crossplane target the Composition is for; on `v2` the recipe's `v2` parts replace its own. @default v1 */
  readonly target?: 'v1' | 'v2';
}

/**
 * The step input for a recipe on a target: the envelope, the recipe (with its `v2` parts in place on the v2 target),
 * and every `setting` field turned into a `value` (from `settings`, else the field's default). A setting with neither
 * fails, naming it.
 */
export function inputFor(full: Recipe, o: InputForOptions): Input {
  const { v2, ...own } = full;
  const recipe: Omit<Recipe, 'v2'> = o.target === 'v2' && v2 ? { ...own, ...v2 } : own;
  const resolve = (fields: readonly FieldMapping[]) =>
    fields.map(resolveMapSettings).map((f): FieldMapping => {
      if (f.setting === undefined) return f;
      const { setting, default: fallback, ...rest } = f;
      const value = o.settings?.[setting] ?? fallback;
      if (value === undefined) {
        throw new Error(
          `${o.backend}-${o.service}: field ${f.to} needs the setting "${setting}", which is not set and has no default; pass it to synth`,
        );
      }
      return { ...rest, value };
    });
  // A map transform's settings replace the values of their keys when given (Transform `map`), then go.
  const resolveMapSettings = (f: FieldMapping): FieldMapping => {
    if (!f.transforms?.some((t) => t.type === 'map' && t.settings)) return f;
    const transforms = f.transforms.map((t): Transform => {
      if (t.type !== 'map' || !t.settings) return t;
      const map = { ...t.map };
      for (const [key, name] of Object.entries(t.settings)) {
        const value = o.settings?.[name];
        if (value === undefined) continue;
        if (typeof value !== 'string' || !/^\S+$/.test(value))
          throw new Error(
            `${o.backend}-${o.service}: setting "${name}" must be one word (an image reference), not ${JSON.stringify(value)}`,
          );
        map[key] = value;
      }
      return { type: 'map', map };
    });
    return { ...f, transforms };
  };
  const resolveWrapper = (w: Wrapper | undefined) => (w?.fields ? { wrapper: { ...w, fields: resolve(w.fields) } } : {});
  return {
    apiVersion: INPUT_API_VERSION,
    kind: INPUT_KIND,
    backend: o.backend,
    service: o.service,
    ...recipe,
    ...resolveWrapper(recipe.wrapper),
    fields: resolve(recipe.fields),
    ...(recipe.companions
      ? { companions: recipe.companions.map((c): Companion => ({ ...c, ...resolveWrapper(c.wrapper), fields: resolve(c.fields) })) }
      : {}),
  };
}

/** The platform settings a recipe reads (FieldMapping `setting`, map transforms' `settings`), on either target. */
export function settingsRead(full: Recipe): string[] {
  const { v2, ...own } = full;
  const names = new Set<string>();
  for (const r of [own, v2 ?? {}]) {
    const fields = [
      ...(r.fields ?? []),
      ...(r.wrapper?.fields ?? []),
      ...(r.companions ?? []).flatMap((c) => [...c.fields, ...(c.wrapper?.fields ?? [])]),
    ];
    for (const f of fields) {
      if (f.setting) names.add(f.setting);
      for (const t of f.transforms ?? []) if (t.type === 'map') for (const name of Object.values(t.settings ?? {})) names.add(name);
    }
  }
  return [...names];
}

const transform: Schema = s.object(
  {
    type: s.string({ enum: TRANSFORM_TYPES }),
    prefix: s.string(),
    format: s.string(),
    map: s.freeform(),
  },
  {
    required: ['type'],
    rules: [
      { rule: "self.type != 'trimPrefix' || has(self.prefix)", message: 'a trimPrefix transform needs prefix' },
      { rule: "self.type != 'format' || has(self.format)", message: 'a format transform needs format' },
      { rule: "self.type != 'map' || has(self.map)", message: 'a map transform needs map' },
    ],
  },
);
const transforms = s.array(transform);
const fieldPath = s.string({ minLength: 1 });
/** A duration as rotations take it: a whole number of minutes, hours or days (`90m`, `12h`, `30d`). */
export const DURATION_PATTERN = '^[1-9][0-9]{0,5}[mhd]$';
const errorAdvice = s.array(
  s.object(
    { match: s.string({ minLength: 1 }), advice: s.string({ minLength: 1 }), reason: s.string({ pattern: '^[A-Z][A-Za-z0-9]*$' }) },
    { required: ['match', 'advice'] },
  ),
);
const anyValue = s.raw({ 'x-kubernetes-preserve-unknown-fields': true });
const FROM_OR_VALUE = 'set exactly one of from and value';
const fieldMappings = s.array(
  s.object(
    {
      to: fieldPath,
      from: fieldPath,
      value: anyValue,
      transforms,
      default: anyValue,
      required: s.boolean(),
      limit: s.object({ bytes: s.integer({ minimum: 1 }), fix: s.string({ minLength: 1 }) }, { required: ['bytes', 'fix'] }),
      ifSet: fieldPath,
      ifUnset: fieldPath,
    },
    {
      required: ['to'],
      // The CEL rule gives the function's validator its message; the API server cannot compile it (`value` is
      // untyped), so the shipped CRD keeps the oneOf, which says the same structurally.
      rules: [{ rule: 'has(self.from) != has(self.value)', message: FROM_OR_VALUE }],
      oneOfRequired: [['from'], ['value']],
    },
  ),
);

const providerConfig: Schema = s.object(
  { name: s.string({ minLength: 1 }), fromFieldPath: fieldPath, format: s.string(), kind: s.string({ minLength: 1 }) },
  { rules: [{ rule: 'has(self.name) != has(self.fromFieldPath)', message: 'set exactly one of name and fromFieldPath' }] },
);
const resource = s.object({ apiVersion: fieldPath, kind: s.string({ minLength: 1 }) }, { required: ['apiVersion', 'kind'] });
const wrapper = s.object(
  {
    apiVersion: s.string({ minLength: 1 }),
    kind: s.string({ minLength: 1 }),
    manifestAt: fieldPath,
    fields: fieldMappings,
    clusterScoped: s.boolean(),
    manifestProviderConfig: providerConfig,
    adoptByClaimLabels: s.boolean(),
  },
  { required: ['apiVersion', 'kind', 'manifestAt'] },
);
const label = s.object({ key: s.string({ minLength: 1 }), from: fieldPath, transforms }, { required: ['key', 'from'] });
const labels = s.array(label);
/** The labels another object is found by (diagnostics, errorsFrom, waitsFor, valueFrom): at least one. */
const selectorLabels = s.array(label, { minItems: 1 });
const generated = s.array(
  s.object({ to: fieldPath, live: s.object({ from: fieldPath, base64: s.boolean() }, { required: ['from'] }) }, { required: ['to'] }),
);

const relatedMatches = s.array(
  s.object(
    { path: fieldPath, equals: s.string(), from: fieldPath },
    {
      required: ['path'],
      rules: [{ rule: 'has(self.equals) != has(self.from)', message: 'set exactly one of equals and from' }],
      oneOfRequired: [['equals'], ['from']],
    },
  ),
  // Bounded, so the API server's estimate of the CEL rule's cost stays within its budget.
  { maxItems: 8 },
);

/** The OpenAPI schema of `Input`, shipped as a CRD in the Function package and used by the function to validate. */
export const inputSchema: Schema = s.object(
  {
    apiVersion: s.string({ enum: [INPUT_API_VERSION] }),
    kind: s.string({ enum: [INPUT_KIND] }),
    backend: s.string({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 }),
    service: s.string({ minLength: 1 }),
    resource,
    wrapper,
    providerConfig,
    fields: fieldMappings,
    parametersTo: fieldPath,
    parameters: s.array(s.object({ from: fieldPath, to: fieldPath, transforms }, { required: ['from', 'to'] })),
    ignoredParameters: s.array(s.string()),
    planTable: s.object({ fromFieldPath: fieldPath, plans: s.map(s.map(anyValue)) }, { required: ['fromFieldPath', 'plans'] }),
    labels,
    connectionSecret: s.object(
      {
        nameSuffix: s.string({ minLength: 1 }),
        local: s.boolean(),
        byWrapped: s.boolean(),
        fromSecret: s.object(
          {
            at: fieldPath,
            nameSuffix: s.string({ minLength: 1 }),
            keys: s.array(s.string({ minLength: 1 }), { minItems: 1 }),
            nameFrom: fieldPath,
          },
          { required: ['at', 'nameSuffix', 'keys'] },
        ),
      },
      { required: ['nameSuffix'] },
    ),
    status: s.array(s.object({ from: fieldPath, to: fieldPath }, { required: ['from', 'to'] })),
    failedStatePaths: s.array(fieldPath),
    failedStates: s.array(s.string({ minLength: 1 })),
    progressPaths: s.array(fieldPath),
    errorPaths: s.array(fieldPath),
    errorAdvice,
    errorsFrom: s.object(
      {
        apiVersion: s.string({ minLength: 1 }),
        kind: s.string({ minLength: 1 }),
        labels: selectorLabels,
        from: fieldPath,
        at: s.string({ minLength: 1 }),
        says: s.string({ minLength: 1 }),
        reason: s.string({ pattern: '^[A-Z][A-Za-z0-9]*$' }),
        pending: s.object(
          { at: s.string({ minLength: 1 }), item: s.string({ minLength: 1 }), says: s.string({ minLength: 1 }) },
          { required: ['at', 'item', 'says'] },
        ),
        absent: s.object(
          { reason: s.string({ pattern: '^[A-Z][A-Za-z0-9]*$' }), says: s.string({ minLength: 1 }) },
          { required: ['reason', 'says'] },
        ),
      },
      { required: ['apiVersion', 'kind', 'labels', 'from', 'at', 'says', 'reason'] },
    ),
    waitsFor: s.object(
      {
        apiVersion: s.string({ minLength: 1 }),
        kind: s.string({ minLength: 1 }),
        labels: selectorLabels,
        condition: s.string({ pattern: '^[A-Z][A-Za-z0-9]*$' }),
        says: s.string({ minLength: 1 }),
        advice: errorAdvice,
      },
      { required: ['apiVersion', 'kind', 'labels', 'condition', 'says'] },
    ),
    expiresAt: fieldPath,
    valueFrom: s.object(
      {
        apiVersion: s.string({ minLength: 1 }),
        kind: s.string({ minLength: 1 }),
        labels: selectorLabels,
        from: fieldPath,
        to: fieldPath,
        format: s.string({ pattern: '%s' }),
        base64: s.boolean(),
      },
      { required: ['apiVersion', 'kind', 'labels', 'from', 'to', 'format'] },
    ),
    shownConditions: s.array(
      s.object({ at: fieldPath, type: s.string({ pattern: '^[A-Z][A-Za-z0-9]*$' }), advice: errorAdvice }, { required: ['at', 'type'] }),
      // A few at most: the claim's conditions are for people to read.
      { maxItems: 4 },
    ),
    generated,
    related: s.object(
      {
        apiVersion: s.string({ minLength: 1 }),
        kind: s.string({ minLength: 1 }),
        match: relatedMatches,
        to: fieldPath,
        item: fieldMappings,
        key: s.string({ minLength: 1 }),
        gone: s.freeform(),
        revoke: relatedMatches,
        expiresAt: fieldPath,
        rotation: s.object({ statusAt: fieldPath, second: fieldMappings }, { required: ['statusAt', 'second'] }),
      },
      { required: ['apiVersion', 'kind', 'match', 'to', 'item', 'key', 'gone'] },
    ),
    rotation: s.object(
      {
        requestedFrom: fieldPath,
        everyFrom: fieldPath,
        overlapFrom: fieldPath,
        overlap: s.string({ pattern: DURATION_PATTERN }),
        statusAt: fieldPath,
        annotation: s.string({ minLength: 1 }),
        second: s.string({ minLength: 1 }),
        switched: fieldMappings,
        works: s.object(
          {
            users: s.array(s.string({ minLength: 1 }), { minItems: 2, maxItems: 2 }),
            applied: s.string({ minLength: 1 }),
            reconciled: s.string({ minLength: 1 }),
            refused: s.string({ minLength: 1 }),
          },
          { required: ['users', 'applied', 'reconciled'] },
        ),
        observedAt: fieldPath,
        receivedFrom: fieldPath,
        credentialsAt: fieldPath,
      },
      {
        required: [
          'requestedFrom',
          'everyFrom',
          'overlapFrom',
          'overlap',
          'statusAt',
          'annotation',
          'second',
          'switched',
          'works',
          'observedAt',
        ],
      },
    ),
    restoredBy: s.object(
      {
        restores: s.object(
          { apiVersion: s.string({ minLength: 1 }), kind: s.string({ minLength: 1 }), match: relatedMatches, backupFrom: fieldPath },
          { required: ['apiVersion', 'kind', 'match', 'backupFrom'] },
        ),
        backups: s.object(
          {
            apiVersion: s.string({ minLength: 1 }),
            kind: s.string({ minLength: 1 }),
            match: relatedMatches,
            done: s.object({ path: fieldPath, equals: s.string({ minLength: 1 }) }, { required: ['path', 'equals'] }),
            idFrom: fieldPath,
          },
          { required: ['apiVersion', 'kind', 'match', 'done', 'idFrom'] },
        ),
        statusAt: fieldPath,
        annotation: s.string({ minLength: 1 }),
        observedAt: fieldPath,
        clear: s.array(fieldPath),
        fields: fieldMappings,
      },
      { required: ['restores', 'backups', 'statusAt', 'annotation', 'observedAt', 'clear', 'fields'] },
    ),
    queue: s.object(
      {
        apiVersion: s.string({ minLength: 1 }),
        kind: s.string({ minLength: 1 }),
        labels: selectorLabels,
        observedAt: fieldPath,
        phaseAt: fieldPath,
        running: s.array(s.string({ minLength: 1 }), { minItems: 1 }),
        done: s.array(s.string({ minLength: 1 }), { minItems: 1 }),
        startedAt: fieldPath,
        says: s.string({ minLength: 1 }),
      },
      { required: ['apiVersion', 'kind', 'labels', 'observedAt', 'phaseAt', 'running', 'done', 'says'] },
    ),
    diagnostics: s.object(
      {
        apiVersion: s.string({ minLength: 1 }),
        kind: s.string({ minLength: 1 }),
        labels: selectorLabels,
        conditions: s.array(
          s.object(
            { type: s.string({ minLength: 1 }), status: s.string({ minLength: 1 }), says: s.string() },
            { required: ['type', 'status'] },
          ),
          { minItems: 1 },
        ),
        failed: s.object({ says: s.string({ minLength: 1 }) }, { required: ['says'] }),
        waiting: s.object(
          { says: s.string({ minLength: 1 }), reasons: s.array(s.string({ minLength: 1 }), { minItems: 1 }) },
          { required: ['says', 'reasons'] },
        ),
        volumes: s.object(
          {
            each: s.array(s.object({ size: fieldPath, storageClass: fieldPath }, { required: ['size'] }), { minItems: 1 }),
            madeAt: fieldPath,
            instances: fieldPath,
            labelled: s.boolean(),
          },
          { required: ['each', 'madeAt'] },
        ),
      },
      { required: ['apiVersion', 'kind', 'labels', 'conditions'] },
    ),
    companions: s.array(
      s.object(
        {
          name: s.string({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 }),
          resource,
          wrapper,
          providerConfig,
          fields: fieldMappings,
          labels,
          generated: s.array(s.object({ to: fieldPath }, { required: ['to'] })),
          when: s.object({ at: fieldPath, has: s.map(anyValue), observed: s.boolean() }, { required: ['at', 'has'] }),
        },
        { required: ['name', 'resource', 'providerConfig', 'fields'] },
      ),
      // A few at most: bounded, so the API server's estimate of the CEL rules' cost below stays within its budget.
      { maxItems: 8 },
    ),
  },
  { required: ['apiVersion', 'kind', 'backend', 'service', 'resource', 'providerConfig', 'fields'] },
);
