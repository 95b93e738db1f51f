/**
 * Composes the one resource of a data service from the observed composite and the step's input (a recipe): the
 * resource itself, or — when the recipe has a wrapper — the wrapper (a provider-kubernetes Object) holding it. It
 * knows no backend: everything backend-specific is recipe data (backends/). Pure: no SDK types, no I/O; every
 * failure is a `ComposeError` whose message reads "cannot <verb> <thing>: <cause>".
 */
import { randomBytes } from 'node:crypto';
import { get, join, set } from '../../lib/fieldpath';
import type { Companion, CompanionWhen, FieldMapping, Input, ProviderConfigSelector } from '../../recipe';
import { applyTransforms } from './transforms';

type Obj = Record<string, unknown>;

export const CLAIM_NAME_LABEL = 'crossplane.io/claim-name';
export const CLAIM_NAMESPACE_LABEL = 'crossplane.io/claim-namespace';
export class ComposeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ComposeError';
  }
}

/** A value longer than its field's limit (FieldMapping.limit): a related list leaves the item out. */
export class OverLimitError extends ComposeError {}

/** What the function composes: the resource, and warnings for the composite (ignored parameters). */
export interface Composed {
  /** The key in desired resources, stable across runs (`a8s-postgresql`). */
  readonly name: string;
  readonly resource: Obj;
  readonly warnings: readonly string[];
}

/** The desired-resources key of the composed resource. */
export function composedResourceName(input: Pick<Input, 'backend' | 'service'>): string {
  return `${input.backend}-${input.service}`;
}

/** A companion's name among the composite's resources: after the main one's, so the two never collide. */
export function companionResourceName(input: Pick<Input, 'backend' | 'service'>, c: Pick<Companion, 'name'>): string {
  return `${composedResourceName(input)}-${c.name}`;
}

/**
 * A companion as an input of its own: the envelope of the main one, its own resource, wrapper, provider config,
 * fields, labels and generated values, and nothing else of the main recipe (no status, connection details, parameters or lists).
 */
export function companionInput(input: Input, c: Companion): Input {
  return {
    apiVersion: input.apiVersion,
    kind: input.kind,
    backend: input.backend,
    service: input.service,
    resource: c.resource,
    ...(c.wrapper ? { wrapper: c.wrapper } : {}),
    providerConfig: c.providerConfig,
    fields: c.fields,
    ...(c.labels ? { labels: c.labels } : {}),
    ...(c.generated ? { generated: c.generated } : {}),
  };
}

/** Whether the list at `when.at` of `target` has an item with every value of `when.has` (Companion.when). */
export function listHas(target: unknown, when: CompanionWhen): boolean {
  const list = get(target, when.at);
  const wanted = Object.entries(when.has);
  return Array.isArray(list) && list.some((item) => isObj(item) && wanted.every(([k, v]) => item[k] === v));
}

/** The composition's name, for messages: the composite's compositionRef (v1 or v2 place), else `<backend>-<service>`. */
export function compositionName(composite: unknown, input?: Partial<Pick<Input, 'backend' | 'service'>>): string {
  const ref = get(composite, 'spec.compositionRef.name') ?? get(composite, 'spec.crossplane.compositionRef.name');
  if (typeof ref === 'string' && ref) return ref;
  return input?.backend && input.service ? `${input.backend}-${input.service}` : 'unknown';
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function cause(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs `f`; a failure becomes "cannot <what>: <cause>". */
function attempt<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ComposeError) throw e;
    throw new ComposeError(`cannot ${what}: ${cause(e)}`);
  }
}

/**
 * The composite as a recipe may read it. A cluster-scoped composite (v1, with a claim) carries the claim's name and
 * namespace in the `crossplane.io/claim-*` labels, which Crossplane sets from the real claim. A namespaced composite
 * (Crossplane v2, no claim) has labels its author wrote: there they would let an app developer compose into another
 * tenant's namespace, so they are replaced by the composite's own name and namespace (which the API server sets).
 * Every read of the composite — recipe fields such as `CLAIM_NAMESPACE`, labels, names — goes through this view.
 */
export function trustedComposite(composite: Obj, where = `(composition ${compositionName(composite)})`): Obj {
  const meta = get(composite, 'metadata');
  if (!isObj(meta) || meta.namespace === undefined || meta.namespace === null || meta.namespace === '') return composite;
  if (typeof meta.namespace !== 'string') throw new ComposeError(`cannot read metadata.namespace of the composite ${where}: not a string`);
  if (typeof meta.name !== 'string' || meta.name === '')
    throw new ComposeError(`cannot read metadata.name of the namespaced composite ${where}: not set`);
  if (meta.labels !== undefined && meta.labels !== null && !isObj(meta.labels))
    throw new ComposeError(`cannot read metadata.labels of the composite ${where}: not an object`);
  const labels = { ...((meta.labels as Obj | undefined) ?? {}), [CLAIM_NAME_LABEL]: meta.name, [CLAIM_NAMESPACE_LABEL]: meta.namespace };
  return { ...composite, metadata: { ...meta, labels } };
}

/**
 * The claim's name and namespace from the composite's labels, falling back to the composite's own. Read it of a
 * `trustedComposite`: on a namespaced composite only its own name and namespace count.
 */
export function claimRef(composite: Obj): { name?: string; namespace?: string } {
  const labels = isObj(get(composite, 'metadata.labels')) ? (get(composite, 'metadata.labels') as Obj) : {};
  return {
    name: str(labels[CLAIM_NAME_LABEL]) ?? str(get(composite, 'metadata.name')),
    namespace: str(labels[CLAIM_NAMESPACE_LABEL]) ?? str(get(composite, 'metadata.namespace')),
  };
}

/** The `spec.providerConfigRef` a selector names (`list`: where it sits in the input, for messages). */
function providerConfigRef(pc: ProviderConfigSelector, composite: Obj, where: string, list = 'providerConfig'): Obj {
  return { name: providerConfigName(pc, composite, where, list), ...(pc.kind ? { kind: pc.kind } : {}) };
}

function providerConfigName(pc: ProviderConfigSelector, composite: Obj, where: string, list: string): string {
  if (pc.name) return pc.name;
  const from = pc.fromFieldPath as string;
  const v = attempt(`read ${list}.fromFieldPath "${from}" ${where}`, () => get(composite, from));
  if (v === undefined || v === null || v === '') {
    throw new ComposeError(`cannot select the ProviderConfig ${where}: composite field ${from} is not set`);
  }
  if (typeof v === 'object') throw new ComposeError(`cannot select the ProviderConfig ${where}: composite field ${from} is not a scalar`);
  return (pc.format ?? '%s').replaceAll('%s', String(v));
}

/** Sets one field mapping on `target`, reading `from` in `composite` (list: where it sits in the input, for messages). */
export function applyField(target: Obj, f: FieldMapping, i: number, composite: Obj, where: string, list = 'fields'): void {
  const thing = `${list}[${i}] (${f.from ? `${f.from} → ` : ''}${f.to}) ${where}`;
  const isSet = (path: string) => attempt(`read ${thing}`, () => get(composite, path)) != null;
  if ((f.ifSet !== undefined && !isSet(f.ifSet)) || (f.ifUnset !== undefined && isSet(f.ifUnset))) return;
  let v: unknown;
  if (f.from === undefined) {
    v = f.value;
  } else {
    const from = f.from;
    v = attempt(`read ${thing}`, () => get(composite, from));
    if (v === undefined || v === null) {
      if (f.default !== undefined) v = f.default;
      else if (f.required) throw new ComposeError(`cannot set ${thing}: composite field ${from} is required but not set`);
      else return;
    } else {
      const raw = v;
      v = attempt(`transform ${thing}`, () => applyTransforms(raw, f.transforms));
    }
  }
  if (f.limit && typeof v === 'string') {
    const bytes = new TextEncoder().encode(v).length;
    if (bytes > f.limit.bytes)
      throw new OverLimitError(`cannot set ${thing}: "${v}" is ${bytes} bytes long, ${f.limit.bytes} at most: ${f.limit.fix}`);
  }
  const value = structuredClone(v);
  attempt(`set ${thing}`, () => set(target, f.to, value));
}

/** Sets the recipe's fields, plan table values and parameters on `target` (the MR, or the a8s object). */
function applyRecipe(target: Obj, input: Input, composite: Obj, where: string, warnings: string[]): void {
  if (input.planTable) {
    const { fromFieldPath, plans } = input.planTable;
    const plan = attempt(`read planTable.fromFieldPath "${fromFieldPath}" ${where}`, () => get(composite, fromFieldPath));
    if (typeof plan !== 'string' || plan === '') {
      throw new ComposeError(`cannot look up the plan ${where}: composite field ${fromFieldPath} is not set`);
    }
    const values = plans[plan];
    if (!isObj(values)) {
      throw new ComposeError(`cannot look up plan "${plan}" in the plan table ${where}: not one of ${Object.keys(plans).join(', ')}`);
    }
    for (const [path, value] of Object.entries(values)) {
      attempt(`set planTable.plans[${plan}] field ${path} ${where}`, () => set(target, path, structuredClone(value)));
    }
  }
  input.fields.forEach((f, i) => applyField(target, f, i, composite, where));

  const params = get(composite, 'spec.parameters');
  if (params === undefined || params === null) return;
  if (!isObj(params)) throw new ComposeError(`cannot read spec.parameters of the composite ${where}: not an object`);
  const mapped = input.parameters ?? [];
  if (mapped.length > 0 && !input.parametersTo)
    throw new ComposeError(`cannot map parameters ${where}: the input has parameters but no parametersTo`);
  mapped.forEach((p, i) => {
    const thing = `parameters[${i}] (${p.from} → ${p.to}) ${where}`;
    const v = attempt(`read ${thing}`, () => get(params, p.from));
    if (v === undefined || v === null) return;
    const out = structuredClone(attempt(`transform ${thing}`, () => applyTransforms(v, p.transforms)));
    attempt(`set ${thing}`, () => set(target, join(input.parametersTo as string, p.to), out));
  });
  const known = new Set(mapped.map((p) => p.from.split(/[.[]/)[0]));
  for (const name of input.ignoredParameters ?? []) {
    if (params[name] !== undefined) {
      warnings.push(`parameter ${name} is not offered by the ${input.backend} backend of ${input.service} and was ignored ${where}`);
    }
    known.add(name);
  }
  for (const name of Object.keys(params).sort()) {
    if (!known.has(name))
      warnings.push(`parameter ${name} is not known to the ${input.backend} backend of ${input.service} and was ignored ${where}`);
  }
}

/** Bytes of a generated value: 256 bits, as much as any password a backend accepts needs. */
const GENERATED_BYTES = 32;

/**
 * The time the credentials an object holds expire (Recipe.expiresAt), written on it by the function. A generated
 * value is kept only from an object whose credentials have not expired: a binding renewed after its expiry finds its
 * old Secret still there (provider-kubernetes deletes it under a backoff) and would otherwise take its revoked
 * password back — which whoever kept a copy of the old creds could use again.
 */
export const EXPIRES_AT_ANNOTATION = 'klutch.anynines.com/expires-at';

/** Writes the composite's expiry (Recipe.expiresAt) on `target`, where it has one; fn.ts has checked it is a time. */
function stampExpiry(target: Obj, input: Input, composite: Obj): void {
  const at = input.expiresAt ? get(composite, input.expiresAt) : undefined;
  const ms = typeof at === 'string' ? Date.parse(at) : NaN;
  if (!Number.isNaN(ms)) set(target, `metadata.annotations[${EXPIRES_AT_ANNOTATION}]`, new Date(ms).toISOString());
}

/** Whether `o` holds credentials that expired (EXPIRES_AT_ANNOTATION at or before `now`). */
function pastExpiry(o: unknown, now: number): boolean {
  const at = get(o, `metadata.annotations[${EXPIRES_AT_ANNOTATION}]`);
  return typeof at === 'string' && Date.parse(at) <= now;
}

/**
 * Sets the recipe's generated values on `target`: the one the observed resource (`observedTarget`, the same object
 * as Crossplane last saw it) holds at the same path, else a new random one. Only the first composition generates;
 * a value that is not a non-empty string there (someone edited it) is generated anew rather than passed on.
 */
function applyGenerated(
  target: Obj,
  input: Input,
  observedTarget: unknown,
  live: Obj | undefined,
  where: string,
  now: number,
  generation?: Generation,
): void {
  // One being deleted (an expired binding's Object on its way out), holding expired credentials, or of another
  // generation (a rotated slot) passes nothing on: what comes after is new.
  const stale = (o: unknown) => get(o, 'metadata.deletionTimestamp') || pastExpiry(o, now) || otherGeneration(o, generation);
  if (stale(observedTarget)) observedTarget = undefined;
  if (stale(live)) live = undefined;
  if (generation && generation.value !== '0') set(target, `metadata.annotations[${generation.annotation}]`, generation.value);
  (input.generated ?? []).forEach((g, i) => {
    const kept = attempt(`read generated[${i}] (${g.to}) of the observed resource ${where}`, () => get(observedTarget, g.to));
    const value =
      typeof kept === 'string' && kept !== '' ? kept : (liveValue(g, live) ?? randomBytes(GENERATED_BYTES).toString('base64url'));
    attempt(`set generated[${i}] (${g.to}) ${where}`, () => set(target, g.to, value));
  });
}

/**
 * The generation of credentials an object is to hold (Recipe.rotation): stamped on it at `annotation` (not '0',
 * which objects made before any rotation hold unstamped), and a generated value is kept only from an object of it.
 */
export interface Generation {
  readonly annotation: string;
  readonly value: string;
}

function otherGeneration(o: unknown, g: Generation | undefined): boolean {
  if (!g || o === undefined) return false;
  const stamp = get(o, `metadata.annotations[${g.annotation}]`);
  return (typeof stamp === 'string' && stamp !== '' ? stamp : '0') !== g.value;
}

/** The value the object in the cluster holds for a generated value (`live.from`, decoded), if it holds one. */
function liveValue(g: NonNullable<Input['generated']>[number], live: Obj | undefined): string | undefined {
  if (!g.live || !live) return undefined;
  const v = get(live, g.live.from);
  if (typeof v !== 'string' || v === '') return undefined;
  const value = g.live.base64 ? Buffer.from(v, 'base64').toString('utf8') : v;
  return value === '' ? undefined : value;
}

function labelsOf(input: Input, composite: Obj, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  const xrLabels = get(composite, 'metadata.labels');
  if (isObj(xrLabels)) {
    for (const k of [CLAIM_NAME_LABEL, CLAIM_NAMESPACE_LABEL]) if (typeof xrLabels[k] === 'string') out[k] = xrLabels[k] as string;
  }
  (input.labels ?? []).forEach((l, i) => {
    const thing = `labels[${i}] (${l.key}) ${where}`;
    const v = attempt(`read ${thing}`, () => get(composite, l.from));
    if (v === undefined || v === null) return;
    const t = attempt(`transform ${thing}`, () => applyTransforms(v, l.transforms));
    if (typeof t === 'object') throw new ComposeError(`cannot set ${thing}: composite field ${l.from} is not a scalar`);
    out[l.key] = String(t);
  });
  return out;
}

function connectionSecretRef(input: Input, composite: Obj, where: string): { name: string; namespace: string } | undefined {
  if (!input.connectionSecret) return undefined;
  const claim = claimRef(composite);
  if (!claim.name || !claim.namespace) {
    throw new ComposeError(
      `cannot name the connection secret ${where}: the composite has no ${CLAIM_NAME_LABEL}/${CLAIM_NAMESPACE_LABEL} labels and no namespace of its own`,
    );
  }
  return { name: `${claim.name}${input.connectionSecret.nameSuffix}`, namespace: claim.namespace };
}

/** The longest name of a cluster-scoped custom resource (a DNS subdomain). */
const MAX_NAME = 253;

/**
 * The name of a cluster-scoped wrapped resource: `<namespace>.<name>`, one per claim cluster-wide (a namespace is a
 * DNS label, so the first dot tells the two apart), and readable where the platform team lists them.
 */
function clusterScopedName(namespace: string, name: string, where: string): string {
  const full = `${namespace}.${name}`;
  if (full.length > MAX_NAME)
    throw new ComposeError(
      `cannot name the cluster-scoped resource ${where}: "${full}" is longer than ${MAX_NAME} characters; use a shorter name for the claim`,
    );
  return full;
}

/**
 * Composes the resource; throws ComposeError. `input` must have passed validateInput. `observed` is the composed
 * resource as Crossplane last saw it, if it exists (the recipe may read names the backend reports); `live` the
 * (wrapped) object as it exists in the cluster, when the function asked for it (GeneratedValue.live); `now` the
 * time expired credentials are judged by (EXPIRES_AT_ANNOTATION).
 */
export function composeResource(
  input: Input,
  observedComposite: Obj,
  observed?: Obj,
  live?: Obj,
  now = Date.now(),
  generation?: Generation,
): Composed {
  const where = `(composition ${compositionName(observedComposite, input)})`;
  const composite = trustedComposite(observedComposite, where);
  const warnings: string[] = [];
  const labels = labelsOf(input, composite, where);
  const configRef = providerConfigRef(input.providerConfig, composite, where);
  const secretRef = connectionSecretRef(input, composite, where);
  const metadata: Obj = Object.keys(labels).length ? { labels } : {};
  const resource: Obj = { apiVersion: input.resource.apiVersion, kind: input.resource.kind };

  let composed: Obj;
  if (input.wrapper) {
    // The wrapped object lives beside the claim, named like it (a v2 composite without a claim: like the composite).
    const claim = claimRef(composite);
    if (!claim.name || !claim.namespace) {
      throw new ComposeError(
        `cannot name the ${input.resource.kind} ${where}: the composite has no ${CLAIM_NAME_LABEL}/${CLAIM_NAMESPACE_LABEL} labels and no namespace of its own`,
      );
    }
    resource.metadata = input.wrapper.clusterScoped
      ? { name: clusterScopedName(claim.namespace, claim.name, where), ...(Object.keys(labels).length ? { labels } : {}) }
      : { name: claim.name, namespace: claim.namespace };
    applyRecipe(resource, input, composite, where, warnings);
    stampExpiry(resource, input, composite);
    // Read through the wrapper: the wrapped object is as good as gone once its wrapper is being deleted.
    const seen = get(observed, 'metadata.deletionTimestamp') ? undefined : get(observed, input.wrapper.manifestAt);
    applyGenerated(resource, input, seen, live, where, now, generation);
    composed = { apiVersion: input.wrapper.apiVersion, kind: input.wrapper.kind, metadata, spec: {} };
    const wrapper = input.wrapper;
    attempt(`set wrapper.manifestAt "${wrapper.manifestAt}" ${where}`, () => set(composed, wrapper.manifestAt, resource));
    (wrapper.fields ?? []).forEach((f, i) => applyField(composed, f, i, composite, where, 'wrapper.fields'));
  } else {
    resource.metadata = metadata;
    resource.spec = {};
    applyRecipe(resource, input, composite, where, warnings);
    stampExpiry(resource, input, composite);
    applyGenerated(resource, input, observed, live, where, now, generation);
    composed = resource;
  }
  set(composed, 'spec.providerConfigRef', configRef);
  const inner = input.wrapper?.manifestProviderConfig;
  if (inner) set(resource, 'spec.providerConfigRef', providerConfigRef(inner, composite, where, 'wrapper.manifestProviderConfig'));
  const from = input.connectionSecret?.fromSecret;
  if (secretRef && from) {
    const reported = from.nameFrom ? get(observed, from.nameFrom) : undefined;
    const secret = typeof reported === 'string' && reported ? reported : `${claimRef(composite).name}${from.nameSuffix}`;
    const details = from.keys.map((key) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      name: secret,
      namespace: secretRef.namespace,
      // A key with a dot (`ca.crt`) is one map key, not a path: bracket it.
      fieldPath: /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `data.${key}` : `data[${key}]`,
      toConnectionSecretKey: key,
    }));
    // After any the recipe's wrapper fields listed there (a backend's gate: provider-kubernetes publishes nothing
    // while one entry cannot be read, and a later entry of the same key wins).
    const before = get(composed, from.at);
    const listed = Array.isArray(before) ? before : [];
    attempt(`set connectionSecret.fromSecret.at "${from.at}" ${where}`, () => set(composed, from.at, [...listed, ...details]));
  }
  // A namespaced managed resource writes its Secret into its own namespace: the reference has no namespace field. A
  // managed resource inside a wrapper publishes its own (the wrapper has nothing to publish).
  if (secretRef) {
    const byWrapped = input.connectionSecret?.byWrapped === true;
    if (byWrapped && !input.wrapper)
      throw new ComposeError(
        `cannot set the connection secret on the wrapped resource ${where}: connectionSecret.byWrapped needs a wrapper`,
      );
    set(
      byWrapped ? resource : composed,
      'spec.writeConnectionSecretToRef',
      input.connectionSecret?.local ? { name: secretRef.name } : secretRef,
    );
  }
  return { name: composedResourceName(input), resource: composed, warnings };
}
