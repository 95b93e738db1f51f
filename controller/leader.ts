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
import { CoordinationV1Api, type KubeConfig, type V1Lease, V1MicroTime } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { Registry } from 'prom-client';
import { keepAliveClient } from './clients';
import { leaderGauge } from './metrics';
import { sleep } from '../lib/abort';
import { statusOf } from '../lib/kube-errors';

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
  /** Where `leader_election_master_status{name}` goes (1 while leading). @default none */
  readonly registry?: Registry;
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
  }

  private setGauge(v: number): void {
    if (this.o.registry) leaderGauge(this.o.registry).set({ name: this.o.name }, v);
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
        this.log.warn({ err: e }, 'cannot read the lease');
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
        this.log.debug({ err }, 'cannot create the lease');
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
      this.log.debug({ err: e }, 'cannot update the lease');
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
    if (changedHolder && holder) this.o.onNewLeader?.(holder);
  }
}
