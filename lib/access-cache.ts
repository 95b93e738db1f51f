/**
 * SelfSubjectAccessReviews in an app cluster with their answers remembered, for the two that ask the same
 * checks again and again: the konnector on every reconcile of a binding (konnector/binding/access.ts; on every change
 * of the binding, its export, CRD and ClusterBinding and once a minute: 3.5 reviews a second on the sandbox's app
 * cluster) and the backend's AppClusterBinding controller on every reconcile (30 and more checks each). What is
 * remembered, and why:
 *
 * - "allowed" for `ttlMs`: a grant withdrawn is seen within that time (or at once, see `forget`);
 * - "denied" for `deniedTtlMs` only, shorter than the 10 s a Forbidden binding waits before it looks again, so a grant
 *   applied is seen as soon as before; it stops the reconciles that events trigger in between (a status write, a
 *   heartbeat) from asking every denied check again each time (about once a second in app-cluster-binding.test);
 * - `forget(checks)` drops answers, e.g. when a watch of the konnector fails (the grant may be gone), so the binding
 *   then says Forbidden, naming what to apply, instead of only the watch's error;
 * - a question already being asked is not asked twice (bindings claiming Secrets share those checks);
 * - errors are not remembered.
 * Neither can watch RBAC to know better: least privilege gives them no read of roles or bindings in the app cluster.
 */
import type { AccessCheck, SelfSubjectReviewer } from './app-cluster-access';

/** How long an allowed answer holds. */
const ACCESS_TTL_MS = 5 * 60_000;
/** How long a denial holds: less than the 10 s a Forbidden binding or AppClusterBinding waits to look again. */
const DENIED_TTL_MS = 5_000;

type ReviewRequest = Parameters<SelfSubjectReviewer['createSelfSubjectAccessReview']>[0];
type ReviewAnswer = Awaited<ReturnType<SelfSubjectReviewer['createSelfSubjectAccessReview']>>;

export interface AccessCacheOptions {
  /** Who answers the questions not remembered (client-node's AuthorizationV1Api). */
  readonly reviewer: SelfSubjectReviewer;
  /** How long an allowed answer holds. @default ACCESS_TTL_MS */
  readonly ttlMs?: number;
  /** How long a denial holds. @default DENIED_TTL_MS */
  readonly deniedTtlMs?: number;
  /** Milliseconds now. @default Date.now */
  readonly now?: () => number;
}

const keyOf = (a: Pick<AccessCheck, 'group' | 'resource' | 'verb' | 'subresource' | 'name'>): string =>
  JSON.stringify([a.group, a.resource, a.verb, a.subresource ?? '', a.name ?? '']);

export class AccessCache implements SelfSubjectReviewer {
  private readonly reviewer: SelfSubjectReviewer;
  private readonly ttlMs: number;
  private readonly deniedTtlMs: number;
  private readonly now: () => number;
  /** Answers: check key → the answer and until when it holds. */
  private readonly answers = new Map<string, { readonly allowed: boolean; readonly until: number }>();
  private readonly asking = new Map<string, Promise<ReviewAnswer>>();
  /** Questions sent to the API server (a metric of what the cache saves). */
  asked = 0;

  constructor(o: AccessCacheOptions) {
    this.reviewer = o.reviewer;
    this.ttlMs = o.ttlMs ?? ACCESS_TTL_MS;
    this.deniedTtlMs = o.deniedTtlMs ?? DENIED_TTL_MS;
    this.now = o.now ?? Date.now;
    if (!(this.ttlMs >= 0)) throw new Error(`AccessCache: ttlMs must be 0 or more, got ${o.ttlMs}`);
    if (!(this.deniedTtlMs >= 0)) throw new Error(`AccessCache: deniedTtlMs must be 0 or more, got ${o.deniedTtlMs}`);
  }

  createSelfSubjectAccessReview(p: ReviewRequest): Promise<ReviewAnswer> {
    const key = keyOf(p.body.spec.resourceAttributes);
    const known = this.answers.get(key);
    if (known && known.until > this.now()) return Promise.resolve({ status: { allowed: known.allowed } });
    this.answers.delete(key);
    const asking = this.asking.get(key);
    if (asking) return asking;
    this.asked++;
    // Only the question still current may be remembered: one forgotten while it was asked is asked again.
    const current = (): boolean => {
      if (this.asking.get(key) !== pending) return false;
      this.asking.delete(key);
      return true;
    };
    const pending: Promise<ReviewAnswer> = this.reviewer.createSelfSubjectAccessReview(p).then(
      (r) => {
        if (current() && r.status) this.remember(key, r.status.allowed === true);
        return r;
      },
      (e: unknown) => {
        current();
        throw e;
      },
    );
    this.asking.set(key, pending);
    return pending;
  }

  /** Drops the remembered answers of `checks`: they are asked again next time. */
  forget(checks: readonly AccessCheck[]): void {
    for (const c of checks) {
      this.answers.delete(keyOf(c));
      this.asking.delete(keyOf(c));
    }
  }

  /** Remembered answers (expired ones are dropped when a new one comes, so this stays bounded by live checks). */
  get size(): number {
    return this.answers.size;
  }

  private remember(key: string, allowed: boolean): void {
    const now = this.now();
    for (const [k, a] of this.answers) if (a.until <= now) this.answers.delete(k);
    this.answers.set(key, { allowed, until: now + (allowed ? this.ttlMs : this.deniedTtlMs) });
  }
}
