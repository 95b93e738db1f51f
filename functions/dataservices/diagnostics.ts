/**
 * Why a resource waits, when its backend does not say (`Recipe.diagnostics`): CloudNativePG stays at "Setting up
 * primary" while its initdb Pod cannot be scheduled because the volume claim cannot bind; the Pod's `PodScheduled`
 * condition says so. The function cannot list objects itself: it asks Crossplane through the response's requirements
 * (an `extra_resources` one, which both Crossplane lines answer) and reads what the next request carries, as for the
 * related list (related.ts). Pure: no SDK calls, no I/O.
 *
 * Trust: the objects' namespace is the composite's own (v2) or its claim's (v1, the label Crossplane wrote from the
 * real claim), never a tenant's label; Crossplane v1.20 ignores a selector's namespace and crank hands over every
 * object of the kind, so each object found is checked again for that namespace and every label before its words are
 * used: another claim's or namespace's Pod never speaks for this one.
 */
import type { Diagnostics, ErrorAdvice, ErrorsFrom, WaitsFor } from '../../recipe';
import { adviceFor } from './status';
import { applyTransforms } from './transforms';
import { claimRef, ComposeError, trustedComposite } from './compose';
import { get, parse } from '../../lib/fieldpath';
import { QUOTA_EXCEEDED } from '../../lib/claim-hold';
// The client's quantity parser alone: util.js imports nothing, so the function's bundle gains one small module.
import { quantityToScalar } from '@kubernetes/client-node/dist/util.js';

type Obj = Record<string, unknown>;

/** The key of the requirement in the response, and of what Crossplane found in the next request. */
export const DIAGNOSTICS_REQUIREMENT = 'diagnostics';

/**
 * The response's TTL while a diagnosed resource waits: a Pod's change does not wake the composite (Crossplane watches
 * only what it composes), so Crossplane reconciles it again after the TTL (with realtime compositions, the default on
 * both lines) and the claim says what Kubernetes says within about this long. Five seconds: the claim in the app
 * cluster names the cause within 10 s of its showing (issue 39), with the composite's, the claim's and the konnector's
 * hops after this one; a waiting composite costs a function run per TTL, none once it is Ready.
 */
export const WAITING_TTL = { seconds: 5, nanos: 0 };

export interface DiagnosticsSelector {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly matchLabels: { readonly labels: Record<string, string> };
}

/** What the objects say: the condition's reason, and the message to add after the backend's progress. */
export interface Said {
  readonly reason: string;
  readonly text: string;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The selector: the kind, the composite's namespace (v2: its own; v1: its claim's) and the labels from its fields.
 * Undefined when the composite has no claim to speak for (a v1 composite made without a claim): nothing to ask.
 */
export function diagnosticsSelector(
  d: Pick<Diagnostics, 'apiVersion' | 'kind' | 'labels'>,
  composite: Obj,
  where: string,
  field = 'diagnostics',
): DiagnosticsSelector | undefined {
  const trusted = trustedComposite(composite, where);
  const namespace = claimRef(trusted).namespace;
  if (!namespace) return undefined;
  const labels: Record<string, string> = {};
  for (const [i, l] of d.labels.entries()) {
    const v = get(trusted, l.from);
    if (v === undefined || v === null || v === '') return undefined;
    let value: unknown;
    try {
      value = applyTransforms(v, l.transforms);
    } catch (e) {
      throw new ComposeError(`cannot set ${field}.labels[${i}] (${l.from} → ${l.key}) ${where}: ${(e as Error).message}`, { cause: e });
    }
    if (typeof value === 'object' && value !== null)
      throw new ComposeError(`cannot set ${field}.labels[${i}] (${l.from} → ${l.key}) ${where}: composite field ${l.from} is not a scalar`);
    labels[l.key] = String(value);
  }
  return { apiVersion: d.apiVersion, kind: d.kind, namespace, matchLabels: { labels } };
}

/** The first condition of `o` (in the recipe's order) that says why, with its message. */
function sayingCondition(d: Diagnostics, o: Obj): { says: string; reason: string; message: string } | undefined {
  const conditions = get(o, 'status.conditions');
  if (!Array.isArray(conditions)) return undefined;
  for (const want of d.conditions) {
    const c = conditions.find((x) => isObj(x) && x.type === want.type && x.status === want.status) as Obj | undefined;
    const message = typeof c?.message === 'string' ? c.message.trim() : '';
    if (c && message)
      return { says: want.says ?? `has ${want.type}=${want.status}`, reason: typeof c.reason === 'string' ? c.reason : '', message };
  }
  return undefined;
}

/** How a failed Pod's containers ended: `container full-recovery exited with 1 (Error)`, the failed ones only. */
function exits(o: Obj): string {
  const statuses = get(o, 'status.containerStatuses');
  const ended = (Array.isArray(statuses) ? statuses : [])
    .filter(isObj)
    .map((c) => ({ name: c.name, t: get(c, 'state.terminated') }))
    .filter((c): c is { name: unknown; t: Obj } => isObj(c.t) && c.t.exitCode !== 0);
  return ended.length
    ? ended
        .map((c) => `container ${String(c.name)} exited with ${String(c.t.exitCode)}${c.t.reason ? ` (${String(c.t.reason)})` : ''}`)
        .join(', ')
    : 'no container status';
}

/** The first container (init containers first) waiting for one of `reasons`, in the kubelet's words. */
function waitingContainer(o: Obj, reasons: readonly string[]): { reason: string; text: string } | undefined {
  for (const at of ['status.initContainerStatuses', 'status.containerStatuses']) {
    const statuses = get(o, at);
    for (const c of Array.isArray(statuses) ? statuses.filter(isObj) : []) {
      const w = get(c, 'state.waiting');
      if (!isObj(w) || typeof w.reason !== 'string' || !reasons.includes(w.reason)) continue;
      const message = typeof w.message === 'string' && w.message.trim() ? `: ${w.message.trim()}` : '';
      return { reason: w.reason, text: `container ${String(c.name)} is waiting: ${w.reason}${message}` };
    }
  }
  return undefined;
}

/**
 * What the objects found say, if one of them does: only objects of the selector's kind in its namespace, carrying
 * every one of its labels and not being deleted; of those the first by name that failed (`failed`) or, else, with a
 * saying condition.
 */
export function diagnose(d: Diagnostics, selector: DiagnosticsSelector, found: readonly Obj[] | undefined): Said | undefined {
  const objects = foundFor(selector, found);
  const failed = d.failed && objects.find((o) => get(o, 'status.phase') === 'Failed');
  if (d.failed && failed)
    return { reason: 'PodFailed', text: `${d.kind} ${String(get(failed, 'metadata.name'))} ${d.failed.says}: ${exits(failed)}` };
  for (const o of d.waiting ? objects : []) {
    const w = waitingContainer(o, d.waiting!.reasons);
    if (w) return { reason: w.reason, text: `${d.kind} ${String(get(o, 'metadata.name'))} ${d.waiting!.says}: ${w.text}` };
  }
  for (const o of objects) {
    const c = sayingCondition(d, o);
    if (c) return { reason: c.reason || 'Waiting', text: `${d.kind} ${String(get(o, 'metadata.name'))} ${c.says}: ${c.message}` };
  }
  return undefined;
}

/**
 * The objects found that may speak for the composite: of the selector's kind in its namespace, carrying every one of
 * its labels and not being deleted; sorted by name.
 */
export function foundFor(selector: DiagnosticsSelector, found: readonly Obj[] | undefined): Obj[] {
  const mine = (found ?? []).filter(
    (o) =>
      get(o, 'apiVersion') === selector.apiVersion &&
      get(o, 'kind') === selector.kind &&
      get(o, 'metadata.namespace') === selector.namespace &&
      !get(o, 'metadata.deletionTimestamp') &&
      Object.entries(selector.matchLabels.labels).every(([k, v]) => get(o, `metadata.labels[${k}]`) === v),
  );
  return mine.sort((a, b) => String(get(a, 'metadata.name')).localeCompare(String(get(b, 'metadata.name'))));
}

/** The key of the `errorsFrom` requirement in the response, and of what Crossplane found in the next request. */
export const ERRORS_FROM_REQUIREMENT = 'errors-from';

/** What `errorsFrom` asks Crossplane for, and the error found, if there is one. */
export interface ErrorElsewhere {
  readonly selector?: DiagnosticsSelector;
  readonly said?: Said;
  /** `errorsFrom.absent`, when Crossplane answered and found no such object. */
  readonly absent?: Said;
}

/** The error at `at` of an object: a non-empty string, or the non-empty strings of a list (CNPG's), joined. */
/** The error at `at` of `o`: a string or a list of them (as CNPG writes), joined; undefined when there is none. */
export function errorAt(o: Obj, at: string): string | undefined {
  const v = get(o, at);
  const said = (Array.isArray(v) ? v : [v])
    .map((x) => (typeof x === 'string' ? x.trim() : x === undefined || x === null ? '' : JSON.stringify(x)))
    .filter((x) => x !== '');
  return said.length ? said.join('; ') : undefined;
}

/**
 * The error an object outside the composed resource reports about it (`Recipe.errorsFrom`): the selector to ask
 * Crossplane with (undefined when the composite has no namespace to look in or lacks a label's field), and, of the
 * objects found that may speak for the composite (as for diagnostics: its namespace, every label, not being deleted),
 * the first by name with a non-empty value at `at`. Throws ComposeError for a composite field that cannot be read.
 */
export function errorElsewhere(e: ErrorsFrom, composite: Obj, found: readonly Obj[] | undefined, where: string): ErrorElsewhere {
  const selector = diagnosticsSelector(e, composite, where, 'errorsFrom');
  if (!selector) return {};
  const v = get(trustedComposite(composite, where), e.from);
  if (v === undefined || v === null || v === '' || typeof v === 'object')
    throw new ComposeError(`cannot read errorsFrom.from (${e.from}) ${where}: the composite has no scalar there`);
  const fill = (format: string) => format.replaceAll('%s', String(v));
  const path = (field: string, format: string) => {
    try {
      const at = fill(format);
      parse(at);
      return at;
    } catch (err) {
      throw new ComposeError(`cannot build errorsFrom.${field} ${where}: ${(err as Error).message}`, { cause: err });
    }
  };
  const at = path('at', e.at);
  const pendingAt = e.pending && path('pending.at', e.pending.at);
  const objects = foundFor(selector, found);
  for (const o of objects) {
    const error = errorAt(o, at);
    if (error)
      return { selector, said: { reason: e.reason, text: `${e.kind} ${String(get(o, 'metadata.name'))} ${fill(e.says)}: ${error}` } };
  }
  if (e.pending && pendingAt) {
    const item = fill(e.pending.item);
    const o = objects.find((x) => {
      const listed = get(x, pendingAt);
      return Array.isArray(listed) && listed.includes(item);
    });
    if (o)
      return { selector, said: { reason: 'Provisioning', text: `${e.kind} ${String(get(o, 'metadata.name'))} ${fill(e.pending.says)}` } };
  }
  // Not asked yet (undefined) is not "none there".
  if (e.absent && found !== undefined && objects.length === 0) {
    const named = Object.values(selector.matchLabels.labels)[0] ?? '';
    return { selector, absent: { reason: e.absent.reason, text: e.absent.says.replaceAll('%s', named) } };
  }
  return { selector };
}

/** The key of the `waitsFor` requirement in the response, and of what Crossplane found in the next request. */
export const WAITS_FOR_REQUIREMENT = 'waits-for';

/** Whether the resource may be composed (`Recipe.waitsFor`), the selector to ask, and why it waits. */
export interface Gate {
  readonly open: boolean;
  readonly selector?: DiagnosticsSelector;
  readonly text?: string;
  /** The rule of `waitsFor.advice` that finds the False condition's message: what to do, and the reason. */
  readonly advice?: ErrorAdvice;
}

/**
 * The gate of a resource not composed yet: open once an object of the selector (checked again for its namespace and
 * labels, as for `diagnostics`) has the condition True; closed until Crossplane has answered. A composite with no claim
 * to speak for (a v1 composite made without one) has nothing to wait for.
 */
export function gate(w: WaitsFor, composite: Obj, found: readonly Obj[] | undefined, where: string): Gate {
  const selector = diagnosticsSelector(w, composite, where, 'waitsFor');
  if (!selector) return { open: true };
  const name = Object.values(selector.matchLabels.labels).join('/');
  const objects = foundFor(selector, found);
  if (objects.some((o) => statusCondition(o, w.condition)?.status === 'True')) return { open: true, selector };
  const c = objects.map((o) => statusCondition(o, w.condition)).find((x) => typeof x?.message === 'string' && x.message.trim());
  const advice = c?.status === 'False' ? adviceFor(String(c.message), w.advice) : undefined;
  const why =
    found === undefined
      ? ''
      : !objects.length
        ? `: there is no ${w.kind} ${name}`
        : c
          ? `: ${w.condition} ${String(c.status)}, ${String(c.message).trim()}`
          : '';
  return { open: false, selector, text: `waiting for ${w.kind} ${name} to ${w.says}${why}`, ...(advice ? { advice } : {}) };
}

/** The condition of type `type` in `o`'s status, if it has one. */
export function statusCondition(o: Obj, type: string): Obj | undefined {
  const conditions = get(o, 'status.conditions');
  return Array.isArray(conditions) ? (conditions.find((x) => isObj(x) && x.type === type) as Obj | undefined) : undefined;
}

/** The key of the ResourceQuota requirement of `diagnostics.volumes` in the response and the next request. */
export const QUOTA_REQUIREMENT = 'quotas';

/**
 * What `diagnostics.volumes` asks for: every ResourceQuota of the selector's namespace (no labels: the operator's own
 * quotas refuse volumes as the platform's do).
 */
export const quotaSelector = (s: DiagnosticsSelector): DiagnosticsSelector => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  namespace: s.namespace,
  matchLabels: { labels: {} },
});

/** The key of the requirement of `diagnostics.volumes.labelled` in the response and the next request. */
export const VOLUMES_REQUIREMENT = 'volumes';

/** What `diagnostics.volumes.labelled` asks for: the PersistentVolumeClaims of the selector's namespace and labels. */
export const volumesSelector = (s: DiagnosticsSelector): DiagnosticsSelector => ({ ...s, apiVersion: 'v1', kind: 'PersistentVolumeClaim' });

/**
 * How many volumes the backend has made: its own count (`made`, as the recipe's `madeAt` reads it) or, where more,
 * the volume claims found with the resource's labels (`claims`: none asked, undefined), which the API server has as soon
 * as the backend made them.
 */
export function volumesMade(made: unknown, claims: DiagnosticsSelector | undefined, found: readonly Obj[] | undefined): number {
  const own = typeof made === 'number' && Number.isSafeInteger(made) && made > 0 ? made : 0;
  return Math.max(own, claims ? foundFor(claims, found).length : 0);
}

/** A quantity as a whole number of its unit (bytes), rounded up; undefined for one Kubernetes would not write. */
function amount(q: unknown): bigint | undefined {
  if (typeof q !== 'string' && typeof q !== 'number') return undefined;
  try {
    const v = quantityToScalar(String(q));
    return typeof v === 'bigint' ? v : BigInt(Math.ceil(v));
  } catch {
    return undefined;
  }
}

/** `n` bytes as Kubernetes writes a quantity of them: with the largest binary suffix that divides it, else plain. */
function bytesOf(n: bigint): string {
  for (const [suffix, unit] of [
    ['Ti', 1n << 40n],
    ['Gi', 1n << 30n],
    ['Mi', 1n << 20n],
    ['Ki', 1n << 10n],
  ] as const)
    if (n >= unit && n % unit === 0n) return `${n / unit}${suffix}`;
  return String(n);
}

/** A volume the backend makes for the resource: its size as written, in bytes, and its storage class if named. */
export interface Volume {
  readonly size: string;
  readonly bytes: bigint;
  readonly cls?: string;
  /** Whose it is, where the resource has more than one instance: `instance 2 of 3` (CNPG makes them in order). */
  readonly of?: string;
}

/**
 * The volumes of the resource (`diagnostics.volumes`, read from `resource`, the composed object as it is wrapped) that
 * the backend has yet to make, in the order it makes them: `each` for every instance, less the first `made`.
 */
export function volumesToMake(v: NonNullable<Diagnostics['volumes']>, resource: Obj, made: unknown): Volume[] {
  const one = v.each.flatMap((e) => {
    const size = get(resource, e.size);
    const bytes = amount(size);
    const cls = e.storageClass ? get(resource, e.storageClass) : undefined;
    return bytes === undefined ? [] : [{ size: String(size), bytes, ...(typeof cls === 'string' && cls ? { cls } : {}) }];
  });
  const n = v.instances ? get(resource, v.instances) : 1;
  const instances = typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 1;
  const done = typeof made === 'number' && Number.isSafeInteger(made) && made > 0 ? made : 0;
  return Array.from({ length: instances }, (_, i) =>
    one.map((v) => (instances > 1 ? { ...v, of: `instance ${i + 1} of ${instances}` } : v)),
  )
    .flat()
    .slice(done);
}

/**
 * The ResourceQuota of `found` that the volumes still to make (volumesToMake), made one after the other, would exceed:
 * the first by name, said as the API server says it to the backend. Quotas are read from their status (what the API
 * server enforces, those made counted in its use); a key not limited there, or a value that does not parse, limits
 * nothing.
 */
export function volumeQuota(
  volumes: readonly Volume[],
  selector: DiagnosticsSelector,
  found: readonly Obj[] | undefined,
): Said | undefined {
  for (const q of foundFor(selector, found)) {
    const hard = get(q, 'status.hard');
    const used = get(q, 'status.used');
    if (!isObj(hard)) continue;
    const usedOf = (k: string) => (isObj(used) ? used[k] : undefined) ?? '0';
    // What the volumes made so far (of this resource) add, per key: each volume is refused against those before it.
    const added = new Map<string, bigint>();
    for (const vol of volumes) {
      const asks: [string, bigint, string][] = [
        ['requests.storage', vol.bytes, vol.size],
        ['persistentvolumeclaims', 1n, '1'],
        ['count/persistentvolumeclaims', 1n, '1'],
        ...(vol.cls
          ? ([
              [`${vol.cls}.storageclass.storage.k8s.io/requests.storage`, vol.bytes, vol.size],
              [`${vol.cls}.storageclass.storage.k8s.io/persistentvolumeclaims`, 1n, '1'],
            ] as [string, bigint, string][])
          : []),
      ];
      const over = asks.filter(([k, ask]) => {
        const limit = amount(hard[k]);
        const now = amount(usedOf(k));
        return limit !== undefined && now !== undefined && now + (added.get(k) ?? 0n) + ask > limit;
      });
      if (over.length) {
        const list = (f: (k: string, shown: string) => string) => over.map(([k, , shown]) => `${k}=${f(k, shown)}`).join(',');
        // What the quota will have counted when the backend asks for this volume: those before it are made by then.
        const usedThen = (k: string) => {
          const before = added.get(k) ?? 0n;
          const then = (amount(usedOf(k)) ?? 0n) + before;
          return before === 0n ? String(usedOf(k)) : k.endsWith('requests.storage') ? bytesOf(then) : String(then);
        };
        return {
          reason: QUOTA_EXCEEDED,
          text: `its volume of ${vol.size}${vol.of ? ` for ${vol.of}` : ''} cannot be made: exceeded quota: ${String(get(q, 'metadata.name'))}, requested: ${list((_, s) => s)}, used: ${list(usedThen)}, limited: ${list((k) => String(hard[k]))}`,
        };
      }
      for (const [k, ask] of asks) added.set(k, (added.get(k) ?? 0n) + ask);
    }
  }
  return undefined;
}
