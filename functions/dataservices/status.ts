/**
 * From the observed composed resource back to the composite: the recipe's status mapping, readiness from the
 * resource's Ready condition, and a claim-visible condition carrying the backend's message when it fails.
 */
import { get, set } from '../../lib/fieldpath';
import type { Input } from '../../recipe';

type Obj = Record<string, unknown>;

/** The composite condition this function reports to the composite and the claim. */
export const CONDITION_TYPE = 'DataServiceReady';

export interface ObservedCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface StatusOutcome {
  /** A partial composite holding only `status` (Crossplane honours nothing else of a desired composite). */
  readonly composite: Obj;
  /** Whether the composed resource is Ready (its Ready condition is True). */
  readonly ready: boolean;
  /** The condition for composite and claim; undefined while the resource is neither ready nor failing. */
  readonly condition?: { readonly status: 'True' | 'False'; readonly reason: string; readonly message?: string };
}

function conditionsOf(observed: unknown): ObservedCondition[] {
  const c = get(observed, 'status.conditions');
  if (!Array.isArray(c)) return [];
  return c.filter(
    (x): x is ObservedCondition => typeof x === 'object' && x !== null && typeof x.type === 'string' && typeof x.status === 'string',
  );
}

/** Reasons of a False Ready condition that are progress, not failure. */
const PROGRESS = new Set(['Creating', 'Deleting', 'Unavailable', '']);

/**
 * The backend's state when it says provisioning failed (`failed`, `Failed`, `failure`, or one of the recipe's
 * `failedStates`) at one of the recipe's `failedStatePaths`, else undefined.
 */
export function failedState(observed: unknown, paths: readonly string[], states: readonly string[] = []): string | undefined {
  for (const p of paths) {
    const v = get(observed, p);
    if (typeof v === 'string' && (/^fail/i.test(v.trim()) || states.includes(v.trim()))) return v;
  }
  return undefined;
}

/** What the backend says it is doing: the non-empty strings at the recipe's `progressPaths`, joined; else undefined. */
export function progress(observed: unknown, paths: readonly string[]): string | undefined {
  const said = paths.map((p) => get(observed, p)).filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  return said.length ? said.map((v) => v.trim()).join(': ') : undefined;
}

/** The first of the recipe's `errorAdvice` rules (or another list of them: `waitsFor.advice`) that finds `message`. */
export const adviceFor = (message: string, rules: Input['errorAdvice']) => rules?.find((r) => new RegExp(r.match, 'i').test(message));

/** `message` with the advice of the first of the recipe's `errorAdvice` rules that finds it. */
export function advised(message: string, rules: Input['errorAdvice']): string {
  const rule = adviceFor(message, rules);
  return rule ? `${message}; ${rule.advice}` : message;
}

/** The error the backend reports at one of the recipe's `errorPaths` (a non-empty string), else undefined. */
export function reportedError(observed: unknown, paths: readonly string[]): string | undefined {
  for (const p of paths) {
    const v = get(observed, p);
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
}

/** The status of the composite from the observed composed resource (undefined when not observed yet). */
export function observeStatus(
  input: Pick<
    Input,
    'status' | 'failedStatePaths' | 'failedStates' | 'progressPaths' | 'errorPaths' | 'errorAdvice' | 'backend' | 'service'
  >,
  observed: Obj | undefined,
): StatusOutcome {
  const status: Obj = {};
  for (const m of input.status ?? []) {
    if (!m.to.startsWith('status.'))
      throw new Error(`status mapping to "${m.to}" is not below status; Crossplane ignores everything else of a composite`);
  }
  if (!observed) return { composite: status, ready: false };
  for (const m of input.status ?? []) {
    const v = get(observed, m.from);
    if (v === undefined) continue;
    set(status, m.to, structuredClone(v));
  }
  const conds = conditionsOf(observed);
  const readyC = conds.find((c) => c.type === 'Ready');
  const synced = conds.find((c) => c.type === 'Synced');
  const ready = readyC?.status === 'True';
  const what = `${input.backend} ${input.service}`;
  if (synced?.status === 'False') {
    // The API server's words about what the provider applies (an admission webhook of the backend's operator that
    // does not answer, say): advised, under the rule's own reason where it has one.
    const message = `${what}: ${synced.message || 'the backend reports an error'}`;
    const rule = adviceFor(message, input.errorAdvice);
    return {
      composite: status,
      ready,
      condition: {
        status: 'False',
        reason: rule?.reason || synced.reason || 'ReconcileError',
        message: rule ? `${message}; ${rule.advice}` : message,
      },
    };
  }
  const error = reportedError(observed, input.errorPaths ?? []);
  if (error !== undefined) {
    const message = advised(`${what}: ${error}`, input.errorAdvice);
    return { composite: status, ready, condition: { status: 'False', reason: 'ProvisioningFailed', message } };
  }
  const failed = failedState(observed, input.failedStatePaths ?? [], input.failedStates ?? []);
  const doing = progress(observed, input.progressPaths ?? []);
  if (failed !== undefined) {
    const message = readyC?.status === 'False' && readyC.message ? readyC.message : (doing ?? `the backend reports state "${failed}"`);
    return {
      composite: status,
      ready,
      condition: { status: 'False', reason: 'ProvisioningFailed', message: advised(`${what}: ${message}`, input.errorAdvice) },
    };
  }
  if (readyC?.status === 'False' && !PROGRESS.has(readyC.reason ?? '') && readyC.message) {
    return {
      composite: status,
      ready,
      condition: { status: 'False', reason: readyC.reason as string, message: `${what}: ${readyC.message}` },
    };
  }
  if (ready) return { composite: status, ready, condition: { status: 'True', reason: 'Available' } };
  // Progress in the backend's own words (a phase and its reason), where the recipe says where to read them.
  if (doing !== undefined)
    return { composite: status, ready, condition: { status: 'False', reason: 'Provisioning', message: `${what}: ${doing}` } };
  return { composite: status, ready };
}

/** Kubernetes' pattern for a condition's reason (metav1.Condition). */
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/**
 * The backend's conditions the recipe shows on the claim (Recipe.shownConditions), as the observed composed resource
 * holds them: one each that the backend reports, with its type, status and reason; a False one says the backend's
 * message after the backend and service, with its advice.
 */
export function shownConditions(
  input: Pick<Input, 'shownConditions' | 'backend' | 'service'>,
  observed: Obj | undefined,
): ObservedCondition[] {
  if (!observed) return [];
  return (input.shownConditions ?? []).flatMap((shown) => {
    const list = get(observed, shown.at);
    const c = (Array.isArray(list) ? list : []).find(
      (x): x is ObservedCondition => typeof x === 'object' && x !== null && x.type === shown.type && typeof x.status === 'string',
    );
    if (!c || !['True', 'False', 'Unknown'].includes(c.status)) return [];
    const reason = c.reason && REASON.test(c.reason) ? c.reason : `${shown.type}${c.status}`;
    const said = typeof c.message === 'string' && c.message.trim() ? c.message.trim() : undefined;
    const message =
      c.status === 'False' ? advised(`${input.backend} ${input.service}: ${said ?? `${shown.type} is False`}`, shown.advice) : said;
    return [{ type: shown.type, status: c.status, reason, ...(message ? { message } : {}) }];
  });
}
