/**
 * One informer per namespace, for collections the konnector may only read namespace by namespace: on the provider,
 * the consumer's credentials reach exactly the namespaces the backend assigned (Klutch's multi-namespace informer).
 * Informers are added as namespaces get assigned; whoever maps events to keys is told about each new one. They hold
 * the synced resource's objects as wire JSON (`Obj`).
 */
import type { InformerObject, WatchInformer } from '../../controller';
import type { Obj } from './objects';

export class NamespacedInformers<T extends InformerObject = Obj> {
  private readonly informers = new Map<string, WatchInformer<T>>();
  private readonly listeners: ((namespace: string, inf: WatchInformer<T>) => void)[] = [];

  constructor(private readonly make: (namespace: string) => WatchInformer<T>) {}

  /** The informer of `namespace`, started on first use. */
  ensure(namespace: string): WatchInformer<T> {
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
  each(fn: (namespace: string, inf: WatchInformer<T>) => void): void {
    this.listeners.push(fn);
    for (const [ns, inf] of this.informers) fn(ns, inf);
  }

  get(namespace: string, name: string): T | undefined {
    return this.informers.get(namespace)?.get(name, namespace);
  }

  list(namespace: string): readonly T[] {
    return this.informers.get(namespace)?.list(namespace) ?? [];
  }

  namespaces(): string[] {
    return [...this.informers.keys()];
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Whether `namespace` has an informer that has listed: before that, a missing object is not known missing. */
  listed(namespace: string): boolean {
    return this.informers.get(namespace)?.hasSynced() ?? false;
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
