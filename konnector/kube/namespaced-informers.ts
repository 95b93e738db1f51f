/**
 * One informer per namespace, for collections the konnector may only read namespace by namespace: on the provider,
 * the consumer's credentials reach exactly the namespaces the backend assigned (Klutch's multi-namespace informer).
 * Informers are added as namespaces get assigned; whoever maps events to keys is told about each new one.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { WatchInformer } from '../../controller';

export class NamespacedInformers {
  private readonly informers = new Map<string, WatchInformer<KubernetesObject>>();
  private readonly listeners: ((namespace: string, inf: WatchInformer<KubernetesObject>) => void)[] = [];

  constructor(private readonly make: (namespace: string) => WatchInformer<KubernetesObject>) {}

  /** The informer of `namespace`, started on first use. */
  ensure(namespace: string): WatchInformer<KubernetesObject> {
    let inf = this.informers.get(namespace);
    if (!inf) {
      inf = this.make(namespace);
      this.informers.set(namespace, inf);
      for (const l of this.listeners) l(namespace, inf);
      void inf.start();
    }
    return inf;
  }

  /** Calls `fn` for every informer, now and as they are added. */
  each(fn: (namespace: string, inf: WatchInformer<KubernetesObject>) => void): void {
    this.listeners.push(fn);
    for (const [ns, inf] of this.informers) fn(ns, inf);
  }

  get(namespace: string, name: string): KubernetesObject | undefined {
    return this.informers.get(namespace)?.get(name, namespace);
  }

  list(namespace: string): readonly KubernetesObject[] {
    return this.informers.get(namespace)?.list(namespace) ?? [];
  }

  namespaces(): string[] {
    return [...this.informers.keys()];
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  lastError(): string | undefined {
    for (const [ns, i] of this.informers) {
      const e = i.lastError();
      if (e) return `namespace ${ns}: ${e}`;
    }
    return undefined;
  }

  async stop(): Promise<void> {
    const all = [...this.informers.values()];
    this.informers.clear();
    await Promise.all(all.map((i) => i.stop()));
  }
}
