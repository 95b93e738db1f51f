/**
 * The syncer of one bound API: informers on both sides and the controllers that move spec up, status down and
 * claimed Secrets/ConfigMaps along. Started by the binding controller once the CRD is established and the konnector
 * may use the resource; stopped when the binding goes (after its objects are gone, see binding.reconcile.ts).
 */
import type { Logger } from 'pino';
import { runWithInformers, watchInformer, type Controller } from '../../../controller';
import type { AcceptablePermissionClaim, APIServiceNamespace } from '../../../exports/bind-api';
import { NamespacedInformers } from '../../kube/namespaced-informers';
import { trimForCache } from '../../kube/trim';
import type { Obj, ResourceRef } from '../../kube/objects';
import type { Runtime } from '../../runtime';
import type { ProviderConnection } from '../connection';
import { claimSync, type ClaimSync, type ClaimedResource } from './claims/claims.controller';
import type { ExportContext } from './context';
import { sidesOf, type Upstream } from './conversion';
import { specController } from './spec/spec.controller';
import { statusController } from './status/status.controller';
import type { Hold } from '../../../lib/claim-hold';

export interface SyncerOptions {
  readonly rt: Runtime;
  readonly conn: ProviderConnection;
  readonly resource: ResourceRef;
  /** The control plane's version, where it stores another than the app cluster's. @default the app cluster's */
  readonly upstream?: Upstream;
  readonly statusSubresource: boolean;
  /** Whether its status has conditions (a claim's): the konnector names what holds it in its Ready condition. */
  readonly statusConditions: boolean;
  /** The binding's `namespace/name`. */
  readonly name: string;
  /** Accepted claims of resources the konnector copies (Secrets, ConfigMaps; owner Provider). */
  readonly claims: readonly AcceptablePermissionClaim[];
  /** Called on every change of an app-cluster object of the resource (the binding waits on them when deleted). */
  readonly onConsumerChange: () => void;
  /** What holds the binding, while it is not Ready: its claims that are not Ready say so (see `restatus`). */
  readonly bindingHold?: () => Hold | undefined;
}

export class ExportSyncer {
  readonly x: ExportContext;
  private readonly controllers: Controller[];
  private readonly status: Controller;
  private readonly claims: ClaimSync[];
  private readonly abort = new AbortController();
  private running?: Promise<unknown>;
  private readonly log: Logger;

  constructor(private readonly o: SyncerOptions) {
    const { rt, conn, resource } = o;
    this.log = conn.log.child({ binding: o.name, resource: `${resource.resource}.${resource.group}` });
    const consumer = watchInformer<Obj>({
      kc: rt.consumer.kc,
      path: `/apis/${resource.group}/${resource.version}/${resource.resource}`,
      log: this.log,
      transform: trimForCache({ intern: true }),
    });
    const sides = sidesOf(resource, o.upstream);
    const provider = new NamespacedInformers((ns) =>
      watchInformer<Obj>({
        kc: conn.kc,
        path: `/apis/${resource.group}/${sides.provider.version}/namespaces/${ns}/${resource.resource}`,
        log: this.log,
        transform: trimForCache({ keepOwn: true, intern: true }),
      }),
    );
    this.x = {
      rt,
      conn,
      resource,
      sides,
      statusSubresource: o.statusSubresource,
      statusConditions: o.statusConditions,
      name: o.name,
      log: this.log,
      consumer,
      provider,
      ...(o.bindingHold ? { bindingHold: o.bindingHold } : {}),
    };
    this.claims = o.claims.map((c) => claimSync(this.x, c.resource as ClaimedResource, c.selector?.names ?? ['*']));
    this.status = statusController(this.x);
    this.controllers = [specController(this.x), this.status, ...this.claims.map((c) => c.controller)];
    for (const e of ['add', 'update', 'delete'] as const) consumer.on(e, () => o.onConsumerChange());
  }

  start(): void {
    const { conn } = this.o;
    const assign = (sn: APIServiceNamespace) => {
      const pns = sn.status?.namespace;
      if (!pns) return;
      this.x.provider.ensure(pns);
      for (const c of this.claims) c.sources.ensure(pns);
    };
    conn.serviceNamespaces.on('add', assign);
    conn.serviceNamespaces.on('update', assign);
    for (const sn of conn.serviceNamespaces.list()) assign(sn);
    // Controllers start once the app-cluster side has listed: before that, a missing object is not known missing.
    // The provider side's informers are made per namespace as they are assigned, and started by `ensure`.
    this.running = runWithInformers(
      { informers: [this.x.consumer, ...this.claims.map((c) => c.targets)], controllers: this.controllers },
      this.abort.signal,
    );
    this.cleanup = () => {
      conn.serviceNamespaces.off('add', assign);
      conn.serviceNamespaces.off('update', assign);
    };
    this.log.info({ claims: this.claims.length }, 'syncer started');
  }

  private cleanup: () => void = () => {};

  hasSynced(): boolean {
    return (
      this.x.consumer.hasSynced() && this.x.provider.hasSynced() && this.claims.every((c) => c.targets.hasSynced() && c.sources.hasSynced())
    );
  }

  lastError(): string | undefined {
    return (
      this.x.consumer.lastError() ??
      this.x.provider.lastError() ??
      this.claims.map((c) => c.targets.lastError() ?? c.sources.lastError()).find((e) => e)
    );
  }

  /** Looks at the status of every copy again: what holds the binding changed, and with it its claims' Ready. */
  restatus(): void {
    for (const pns of this.x.provider.namespaces())
      for (const o of this.x.provider.list(pns)) this.status.enqueue(`${pns}/${o.metadata.name}`);
  }

  /** App-cluster objects of the resource, from the cache. */
  consumerObjects(): Obj[] {
    return [...this.x.consumer.list()];
  }

  /** Stops the controllers (finishing reconciles in flight) and the informers. */
  async stop(): Promise<void> {
    if (this.abort.signal.aborted) return;
    this.abort.abort();
    this.cleanup();
    await this.running; // the controllers drained, then the app-cluster side's informers stopped
    await Promise.all([this.x.provider.stop(), ...this.claims.map((c) => c.sources.stop())]);
    this.log.info('syncer stopped');
  }
}
