/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics (leaderelection.LeaderElector):
 * - a candidate tries every `retryPeriodMs` to acquire the Lease: create it, or take it over when its holder has not
 *   renewed it for `leaseDurationMs` — measured on this process's clock from when it last saw the record change, so
 *   clock skew between replicas does not matter;
 * - the leader renews every `retryPeriodMs`, with one write of the Lease as it last wrote it (client-go's fast path;
 *   it reads the Lease first only when that write fails); if it cannot renew within `renewDeadlineMs` it stops
 *   leading (its signal aborts) before anyone else may take over (renewDeadline < leaseDuration);
 * - on shutdown the leader releases the Lease (empty holder), so a successor need not wait out the lease.
 * Writes use the Lease's resourceVersion, so two candidates can never both win.
 *
 * Written here because no well-kept npm package offers it; @kubernetes/client-node has the Lease API only.
 */
import { readFileSync } from 'node:fs';
import { CoordinationV1Api, type KubeConfig, type V1Lease, V1MicroTime } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { Registry } from 'prom-client';
import { keepAliveClient } from './clients';
import { leaderCampaignMetrics, leaderGauge } from './metrics';
import { sleep } from '../lib/abort';
import { messageOf, statusOf } from '../lib/kube-errors';

export interface LeaderElectorOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  /** The Lease's name (`klutch-bind`). */
  readonly name: string;
  /** This candidate, unique among replicas (the Pod name). */
  readonly identity: string;
  /** @default 15_000 */
  readonly leaseDurationMs?: number;
  /** @default 10_000 */
  readonly renewDeadlineMs?: number;
  /** @default 2_000 */
  readonly retryPeriodMs?: number;
  /** Called on becoming leader; `signal` aborts when leadership ends. May return a promise (awaited on stop). */
  readonly onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called when leadership ends (lost, or released on shutdown). */
  readonly onStoppedLeading?: () => void;
  /** Called whenever the observed leader changes (including to this candidate). */
  readonly onNewLeader?: (identity: string) => void;
  readonly log?: Logger;
  /** Where `leader_election_master_status{name}` and the campaign's metrics go (metrics.ts). @default none */
  readonly registry?: Registry;
  /** The command-line flag that names the Lease's namespace, for the fix a failed campaign logs. @default '--lease-namespace' */
  readonly namespaceFlag?: string;
  /** How often a campaign that keeps failing for the same reason is logged again. @default 60_000 */
  readonly problemLogIntervalMs?: number;
}

/** Why the Lease could not be read or written, and what the operator does about it: logged, and counted by `code`. */
export interface CampaignProblem {
  /** The HTTP status, or `unreachable` when the API server did not answer. */
  readonly code: string;
  readonly reason: string;
  readonly fix: string;
}

export class LeaderElector {
  private readonly o: Required<Pick<LeaderElectorOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>> & LeaderElectorOptions;
  private readonly api: CoordinationV1Api;
  private readonly log: Logger;
  /** The record as last seen, and when (our clock) it last changed. */
  private observed?: { holder: string; renewTime: string; at: number };
  private leading = false;
  /** The Lease as this candidate last wrote it (the API server's answer): what a leader renews. */
  private written?: V1Lease;
  /** When the API server last answered a Lease request (any status); a probe reads it (`silentForMs`). */
  private answeredAt = Date.now();
  /** When some replica was last seen leading (renewing the Lease), or when this candidate started: the leaderless gauge. */
  private ledAt = Date.now();
  /** The campaign's last problem and when it was logged: the same one again is logged at most every interval. */
  private problem?: { key: string; loggedAt: number };

  constructor(o: LeaderElectorOptions) {
    const leaseDurationMs = o.leaseDurationMs ?? 15_000;
    const renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    const retryPeriodMs = o.retryPeriodMs ?? 2_000;
    if (!(leaseDurationMs > renewDeadlineMs)) {
      throw new Error(`leader election: leaseDurationMs (${leaseDurationMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`);
    }
    if (!(renewDeadlineMs > retryPeriodMs * 1.2)) {
      throw new Error(`leader election: renewDeadlineMs (${renewDeadlineMs}) must be greater than 1.2 × retryPeriodMs (${retryPeriodMs})`);
    }
    if (!o.identity) throw new Error('leader election: identity is required (e.g. the Pod name)');
    this.o = { ...o, leaseDurationMs, renewDeadlineMs, retryPeriodMs };
    this.api = keepAliveClient(o.kc, CoordinationV1Api);
    this.log = (o.log ?? pino({ level: 'silent' })).child({ lease: `${o.namespace}/${o.name}`, identity: o.identity });
    this.setGauge(0);
    if (o.registry) leaderCampaignMetrics(o.registry).leaderless(o.name, () => this.leaderlessMs() / 1000);
  }

  private setGauge(v: number): void {
    if (this.o.registry) leaderGauge(this.o.registry).set({ name: this.o.name }, v);
  }

  /**
   * How long, as this candidate sees it, no replica has led: 0 while the Lease's holder renews it within the lease
   * duration, else the time since the last renewal it saw (or since it started, when it never saw one).
   */
  leaderlessMs(): number {
    const o = this.observed;
    if (this.leading || (o?.holder && Date.now() - o.at < this.o.leaseDurationMs)) return 0;
    return Math.max(0, Date.now() - Math.max(this.ledAt, o?.holder ? o.at : 0));
  }

  /**
   * A Lease request failed while campaigning or renewing: counted by status, and logged at warn with the Lease, the
   * status, the reason and the fix — the first time, when the reason changes, and then at most every interval.
   */
  private campaignFailed(verb: 'create' | 'read' | 'update', e: unknown): void {
    const p = diagnoseLease(verb, e, { namespace: this.o.namespace, name: this.o.name, flag: this.o.namespaceFlag ?? '--lease-namespace' });
    if (this.o.registry) leaderCampaignMetrics(this.o.registry).errors.inc({ name: this.o.name, code: p.code });
    const key = `${verb} ${p.code} ${p.reason}`;
    const every = this.o.problemLogIntervalMs ?? 60_000;
    if (this.problem?.key === key && Date.now() - this.problem.loggedAt < every) return;
    this.problem = { key, loggedAt: Date.now() };
    this.log.warn(
      { namespace: this.o.namespace, lease: this.o.name, verb, code: p.code, fix: p.fix, err: e },
      `cannot ${verb} Lease ${this.o.namespace}/${this.o.name}: ${p.reason}; no controller runs on this replica until it can. ${p.fix}`,
    );
  }

  /**
   * How long the API server has not answered this candidate's Lease requests (made every retry period, leading or
   * not): a readiness check that fails while the API server is unreachable, which informers that listed once cannot tell.
   */
  silentForMs(): number {
    return Date.now() - this.answeredAt;
  }

  /** Whether this candidate leads right now. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Campaigns, leads, and campaigns again after losing, until `signal` aborts; then releases the Lease if held. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.acquire(signal))) break;
      await this.lead(signal);
    }
  }

  /** Tries until acquired (true) or `signal` aborts (false). */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('campaigning for leadership');
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) return true;
      await sleep(this.o.retryPeriodMs * (1 + Math.random() * 0.2), signal);
    }
    return false;
  }

  private async lead(signal: AbortSignal): Promise<void> {
    this.leading = true;
    this.setGauge(1);
    this.log.info('became leader');
    const leadership = new AbortController();
    const onAbort = () => leadership.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let work: Promise<void> = Promise.resolve();
    try {
      work = Promise.resolve(this.o.onStartedLeading(leadership.signal)).catch((e: unknown) => {
        this.log.error({ err: e }, 'leader work failed');
      });
      let lastRenew = Date.now();
      while (!signal.aborted) {
        await sleep(this.o.retryPeriodMs, signal);
        if (signal.aborted) break;
        if (await this.tryAcquireOrRenew()) {
          lastRenew = Date.now();
        } else if (Date.now() - lastRenew >= this.o.renewDeadlineMs || this.observed?.holder !== this.o.identity) {
          this.log.warn('lost leadership: could not renew the lease within the renew deadline');
          break;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      leadership.abort();
      await work;
      this.leading = false;
      this.setGauge(0);
      if (signal.aborted) await this.release();
      this.o.onStoppedLeading?.();
      this.log.info('stopped leading');
    }
  }

  /** One attempt to create, take over or renew the Lease. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new V1MicroTime();
    const leaseDurationSeconds = Math.ceil(this.o.leaseDurationMs / 1000);
    // client-go's fast path: a leader renews the Lease as it last wrote it, without reading it first (one request a
    // retry period instead of two). Its resourceVersion makes a write by anyone else since then a 409, and any failure
    // falls through to the read below.
    const written = this.written;
    this.written = undefined;
    if (this.leading && written?.spec && Date.now() < (this.observed?.at ?? 0) + this.o.leaseDurationMs) {
      try {
        this.written = await this.api.replaceNamespacedLease({
          name: this.o.name,
          namespace: this.o.namespace,
          body: {
            ...written,
            spec: {
              ...written.spec,
              leaseDurationSeconds,
              renewTime: now,
              acquireTime: written.spec.acquireTime ? new V1MicroTime(String(written.spec.acquireTime as unknown)) : now,
            },
          },
        });
        this.answeredAt = Date.now();
        this.see(this.o.identity, now.toISOString());
        return true;
      } catch (e) {
        if (statusOf(e) !== undefined) this.answeredAt = Date.now();
        this.log.debug({ err: e }, 'cannot renew the lease as last written; reading it');
      }
    }
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name: this.o.name, namespace: this.o.namespace });
      this.answeredAt = Date.now();
    } catch (e) {
      if (statusOf(e) !== undefined) this.answeredAt = Date.now();
      if (statusOf(e) !== 404) {
        this.campaignFailed('read', e);
        return false;
      }
      try {
        this.written = await this.api.createNamespacedLease({
          namespace: this.o.namespace,
          body: {
            metadata: { name: this.o.name, namespace: this.o.namespace },
            spec: { holderIdentity: this.o.identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
          },
        });
        this.see(this.o.identity, now.toISOString());
        return true;
      } catch (err) {
        if (statusOf(err) !== undefined) this.answeredAt = Date.now();
        // 409: another candidate created it first; the next attempt reads it.
        if (statusOf(err) !== 409) this.campaignFailed('create', err);
        return false;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewTime = spec.renewTime ? String(spec.renewTime as unknown) : '';
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime) this.see(holder, renewTime);
    const expired = Date.now() > (this.observed?.at ?? 0) + (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (holder && holder !== this.o.identity && !expired) return false;

    const mine = holder === this.o.identity;
    const body: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: this.o.identity,
        leaseDurationSeconds,
        renewTime: now,
        acquireTime: mine && spec.acquireTime ? new V1MicroTime(String(spec.acquireTime as unknown)) : now,
        leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      // The read resourceVersion travels in metadata: a concurrent writer makes this a 409 Conflict.
      this.written = await this.api.replaceNamespacedLease({ name: this.o.name, namespace: this.o.namespace, body });
      this.see(this.o.identity, now.toISOString());
      return true;
    } catch (e) {
      // 409: another candidate wrote it first, which is the election working.
      if (statusOf(e) !== 409) this.campaignFailed('update', e);
      else this.log.debug({ err: e }, 'cannot update the lease: another candidate wrote it first');
      return false;
    }
  }

  /** Gives the Lease up on shutdown so a successor takes over at once. */
  private async release(): Promise<void> {
    try {
      const lease = await this.api.readNamespacedLease({ name: this.o.name, namespace: this.o.namespace });
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      await this.api.replaceNamespacedLease({
        name: this.o.name,
        namespace: this.o.namespace,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime() } },
      });
      this.log.info('released the lease');
    } catch (e) {
      this.log.warn({ err: e }, 'cannot release the lease; a successor waits for it to expire');
    }
  }

  private see(holder: string, renewTime: string): void {
    const changedHolder = this.observed?.holder !== holder;
    this.observed = { holder, renewTime, at: Date.now() };
    if (holder) this.ledAt = Date.now();
    if (holder === this.o.identity && this.problem) {
      this.problem = undefined;
      this.log.info(`Lease ${this.o.namespace}/${this.o.name} written again`);
    }
    if (changedHolder && holder) this.o.onNewLeader?.(holder);
  }
}

/** What a failed Lease request means and how to fix it, named for the operator who reads the log. */
function diagnoseLease(
  verb: 'create' | 'read' | 'update',
  e: unknown,
  at: { readonly namespace: string; readonly name: string; readonly flag: string },
): CampaignProblem {
  const status = statusOf(e);
  const message = messageOf(e);
  const lease = `Lease ${at.namespace}/${at.name}`;
  if (status === undefined) {
    return {
      code: 'unreachable',
      reason: `the API server did not answer (${message})`,
      fix: 'Check that this replica reaches the API server.',
    };
  }
  const code = String(status);
  if (status === 404 && verb === 'create') {
    return {
      code,
      reason: `namespace ${at.namespace} does not exist (${message})`,
      fix: `Create it (kubectl create namespace ${at.namespace}) or start with ${at.flag}=<a namespace that exists>.`,
    };
  }
  if (status === 403) {
    return {
      code,
      reason: `forbidden (${message})`,
      fix: `Grant this replica's identity get, create and update on leases.coordination.k8s.io in namespace ${at.namespace} (a Role and RoleBinding there), or start with ${at.flag}=<a namespace where it may>.`,
    };
  }
  if (status === 401)
    return { code, reason: `unauthorized (${message})`, fix: "Renew this replica's credentials (its kubeconfig or ServiceAccount token)." };
  return { code, reason: `the API server answered ${status} (${message})`, fix: `Check ${lease} and the API server's log.` };
}

/** Where a Pod's ServiceAccount namespace is mounted (every Pod with a token has it). */
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The namespace this process's Pod runs in: `$POD_NAMESPACE` (the downward API), else its ServiceAccount's namespace
 * file; undefined outside a Pod. Where a replica's Lease belongs by default.
 */
export function podNamespace(env: NodeJS.ProcessEnv = process.env, file = SERVICE_ACCOUNT_NAMESPACE_FILE): string | undefined {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
