/**
 * The konnector's SelfSubjectAccessReviews in the app cluster, with their "allowed" answers remembered. Every
 * reconcile of a binding asks the same checks (access.ts), and bindings are reconciled on every change of their
 * export, ClusterBinding, CRD, own status and once a minute: uncached that was 3.5 reviews a second on an app cluster
 * of the sandbox. What is remembered, and why:
 *
 * - only "allowed", for `ttlMs`: a grant withdrawn is seen within that time (or at once, see `forget`), while a
 *   denial is asked again on every reconcile (every 10 s while Forbidden), so a grant applied is seen as soon as now;
 * - `forget(checks)` drops answers when a watch of the binding fails (the grant may be gone), so the binding then
 *   says Forbidden, naming what to apply, instead of only the watch's error;
 * - a question already being asked is not asked twice (bindings claiming Secrets share those checks);
 * - errors are not remembered.
 * The konnector cannot watch RBAC to know better: least privilege gives it no read of roles or bindings.
 */
import type { AccessCheck, SelfSubjectReviewer } from '../../lib/app-cluster-access';

/** How long an allowed answer holds. */
export const ACCESS_TTL_MS = 5 * 60_000;

type ReviewRequest = Parameters<SelfSubjectReviewer['createSelfSubjectAccessReview']>[0];
type ReviewAnswer = Awaited<ReturnType<SelfSubjectReviewer['createSelfSubjectAccessReview']>>;

export interface AccessCacheOptions {
  /** Who answers the questions not remembered (client-node's AuthorizationV1Api). */
  readonly reviewer: SelfSubjectReviewer;
  /** How long an allowed answer holds. @default ACCESS_TTL_MS */
  readonly ttlMs?: number;
  /** Milliseconds now. @default Date.now */
  readonly now?: () => number;
}

const keyOf = (a: Pick<AccessCheck, 'group' | 'resource' | 'verb' | 'subresource' | 'name'>): string =>
  JSON.stringify([a.group, a.resource, a.verb, a.subresource ?? '', a.name ?? '']);

export class AccessCache implements SelfSubjectReviewer {
  private readonly reviewer: SelfSubjectReviewer;
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** Allowed answers: check key → until when. */
  private readonly allowed = new Map<string, number>();
  private readonly asking = new Map<string, Promise<ReviewAnswer>>();
  /** Questions sent to the API server (a metric of what the cache saves). */
  asked = 0;

  constructor(o: AccessCacheOptions) {
    this.reviewer = o.reviewer;
    this.ttlMs = o.ttlMs ?? ACCESS_TTL_MS;
    this.now = o.now ?? Date.now;
    if (!(this.ttlMs >= 0)) throw new Error(`AccessCache: ttlMs must be 0 or more, got ${o.ttlMs}`);
  }

  createSelfSubjectAccessReview(p: ReviewRequest): Promise<ReviewAnswer> {
    const key = keyOf(p.body.spec.resourceAttributes);
    const until = this.allowed.get(key);
    if (until !== undefined && until > this.now()) return Promise.resolve({ status: { allowed: true } });
    this.allowed.delete(key);
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
        if (current() && r.status?.allowed) this.remember(key);
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
      this.allowed.delete(keyOf(c));
      this.asking.delete(keyOf(c));
    }
  }

  /** Remembered answers (expired ones are dropped when a new one comes, so this stays bounded by live checks). */
  get size(): number {
    return this.allowed.size;
  }

  private remember(key: string): void {
    const now = this.now();
    for (const [k, until] of this.allowed) if (until <= now) this.allowed.delete(k);
    this.allowed.set(key, now + this.ttlMs);
  }
}
