/**
 * The APIServiceBinding controller, wired: keys are bindings `<namespace>/<name>`, enqueued by their own events, by
 * the CRD and APIServiceExport of their name, by their kubeconfig Secret and by their provider connection. It holds
 * what outlives a reconcile — each binding's syncer and the kubeconfig Secret its connection keeps current — and
 * builds the reconcile's narrow dependencies (binding.deps.ts) from the konnector's clients and caches.
 */
import type { V1CustomResourceDefinition, V1Secret } from '@kubernetes/client-node';
import { byRef, Controller, objectKey, refKey, splitKey, type WatchInformer } from '../../controller';
import { APPLY_PATCH, bindObjects, READY_CONDITION, SYNCER_FIELD_MANAGER, type APIServiceBinding } from '../../exports/bind-api';
import { bindingHold } from '../../lib/claim-hold';
import { missingAccess } from '../../lib/app-cluster-access';
import { AccessCache } from '../../lib/access-cache';
import { isForbidden, isNotFound, messageOf } from '../../lib/kube-errors';
import type { ProviderConnection } from '../provider/connection';
import type { Connections } from '../provider/connections';
import { resourceClient } from '../provider/export/context';
import { metaPatch } from '../provider/export/spec/spec.controller';
import { ExportSyncer } from '../provider/export/syncer';
import { BindResources, type Runtime } from '../runtime';
import type { BindingDeps } from './binding.deps';
import { reconcileBinding } from './binding.reconcile';

export interface BindingControllerOptions {
  readonly rt: Runtime;
  readonly bindings: WatchInformer<APIServiceBinding>;
  readonly crds: WatchInformer<V1CustomResourceDefinition>;
  readonly connections: Connections<ProviderConnection>;
  /** Starts watching the kubeconfig Secrets of a namespace (once per namespace). */
  watchSecrets(namespace: string, onChange: (s: V1Secret) => void): void;
}

export interface BindingController {
  readonly controller: Controller;
  /** Bindings that use a connection (its exports or ClusterBinding changed). */
  keysOf(conn: ProviderConnection): string[];
  /** Bindings of a name on a connection (an export of that name changed). */
  keysNamed(name: string, conn: ProviderConnection): string[];
  /** Stops every syncer and releases every connection (after the controller stopped). */
  stopAll(): Promise<void>;
}

interface Running {
  readonly syncer: ExportSyncer;
  /** What the syncer was started for; a change restarts it. */
  readonly fingerprint: string;
}

export function bindingController(o: BindingControllerOptions): BindingController {
  const { rt, connections } = o;
  const view = o.bindings;
  const running = new Map<string, Running>();
  /** What holds each binding, in the words its claims last read ('' while Ready). */
  const heldBy = new Map<string, string>();
  const holdOf = (key: string) => {
    const ref = splitKey(key);
    const ready = view.get(ref.name, ref.namespace)?.status?.conditions?.find((c) => c.type === READY_CONDITION);
    return ready && bindingHold(ref.name, ready);
  };
  /** The kubeconfig Secret (`namespace/name`) each binding key uses. */
  const secretOf = new Map<string, string>();
  const keys = (filter: (b: APIServiceBinding) => boolean) => view.list().filter(filter).map(objectKey);
  const r = BindResources.bindings;
  const statuses = bindObjects(rt.home.custom, r);
  const bindings = resourceClient(rt.home, {
    group: r.group,
    version: r.version,
    resource: r.plural,
    kind: r.kind,
    namespaced: true,
  });

  const release = async (key: string): Promise<void> => {
    const bound = running.get(key);
    running.delete(key);
    await bound?.syncer.stop();
    // The heartbeat keeps a kubeconfig Secret current only while some binding uses it.
    const secret = secretOf.get(key);
    secretOf.delete(key);
    const conn = connections.of(key);
    if (conn && secret && ![...secretOf.entries()].some(([k, s]) => s === secret && connections.of(k) === conn))
      conn.targets.delete(secret);
    await connections.release(key);
  };

  // The answers to the access checks every reconcile asks, remembered while allowed (lib/access-cache.ts).
  const access = new AccessCache({ reviewer: rt.consumer.authz });
  let ctl: Controller | undefined;
  const deps: BindingDeps = {
    controlPlaneMode: rt.controlPlaneMode,
    now: () => new Date(),
    getBinding: (ref) => view.get(ref.name, ref.namespace),
    getCrd: (name) => o.crds.get(name),
    readKubeconfigSecret: async (ref) => {
      o.watchSecrets(ref.namespace, (s) =>
        keys((b) => b.spec.kubeconfigSecretRef.namespace === ref.namespace && b.spec.kubeconfigSecretRef.name === s.metadata?.name).forEach(
          (k) => ctl?.enqueue(k),
        ),
      );
      const cached = rt.kubeconfigSecret(ref.namespace, ref.name);
      if (cached) return cached;
      try {
        return await rt.home.core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        if (isForbidden(e)) return 'forbidden';
        throw new Error(`cannot read Secret ${ref.namespace}/${ref.name}: ${messageOf(e)}`, { cause: e });
      }
    },
    connectionOf: (key) => connections.of(key),
    connect: async (key, source, secret) => {
      const conn = source ? await connections.acquire(key, source) : connections.of(key);
      if (!conn) throw new Error(`binding ${key} holds no provider connection to keep`);
      conn.targets.set(`${secret.namespace}/${secret.name}`, { namespace: secret.namespace, name: secret.name, key: secret.key });
      secretOf.set(key, `${secret.namespace}/${secret.name}`);
      return conn;
    },
    missingAccess: (checks) => missingAccess(access, checks),
    forgetAccess: (checks) => access.forget(checks),
    applyCrd: async (crd) => {
      await rt.consumer.crds.patchCustomResourceDefinition(
        { name: crd.metadata.name, body: crd, fieldManager: SYNCER_FIELD_MANAGER, force: true },
        APPLY_PATCH,
      );
    },
    deleteCrd: (name, uid) =>
      rt.consumer.crds.deleteCustomResourceDefinition({ name, body: { preconditions: { uid } } }).then(
        () => undefined,
        (e: unknown) => {
          if (!isNotFound(e)) throw e;
        },
      ),
    runSyncer: async (key, spec) => {
      const conn = connections.of(key);
      if (!conn) throw new Error(`binding ${key} has no provider connection to sync through`);
      const fingerprint = JSON.stringify([conn.key, spec.resource, spec.statusSubresource, spec.statusConditions, spec.claims]);
      const bound = running.get(key);
      if (bound?.fingerprint === fingerprint) return bound.syncer;
      await bound?.syncer.stop();
      const syncer = new ExportSyncer({
        rt,
        conn,
        ...spec,
        name: key,
        bindingHold: () => holdOf(key),
        // A deleted binding waits for its objects to go: each of their changes is a reason to look again.
        onConsumerChange: () => {
          const ref = splitKey(key);
          if (view.get(ref.name, ref.namespace)?.metadata.deletionTimestamp) ctl?.enqueue(key);
        },
      });
      running.set(key, { syncer, fingerprint });
      syncer.start();
      return syncer;
    },
    deleteConsumerObject: (resource, obj) =>
      resourceClient(rt.consumer, resource).delete(obj.metadata.namespace!, obj.metadata.name, obj.metadata.uid ?? ''),
    release,
    setFinalizers: async (b, finalizers) => {
      await bindings.patch(b.metadata.namespace!, b.metadata.name!, metaPatch(b, finalizers, {}));
    },
    writeStatus: async (ref, status) => {
      try {
        await statuses.patchStatus({ namespace: ref.namespace!, name: ref.name }, status);
      } catch (e) {
        throw new Error(`cannot write the status of APIServiceBinding ${refKey(ref)}: ${messageOf(e)}`, { cause: e });
      }
    },
    setReady: (ref, ready) => {
      const labels = { binding_namespace: ref.namespace!, binding: ref.name };
      if (ready === undefined) rt.metrics.bindingReady.remove(labels);
      else rt.metrics.bindingReady.set(labels, ready ? 1 : 0);
    },
  };

  const controller = new Controller({
    name: 'bindings',
    workers: 4,
    log: rt.log,
    registry: rt.registry,
    reconcile: byRef(async (ref, ctx) => {
      try {
        return await reconcileBinding(deps, ref, ctx);
      } catch (e) {
        throw new Error(`cannot reconcile APIServiceBinding ${refKey(ref)}: ${messageOf(e)}`, { cause: e });
      }
    }),
  });
  ctl = controller;
  const named = (name: string) => keys((b) => b.metadata.name === name);
  controller.watch(o.bindings, (b) => [objectKey(b)]);
  // A binding's Ready changed: its claims that are not Ready name it, or stop naming it.
  const rehold = (b: APIServiceBinding) => {
    const key = objectKey(b);
    const h = holdOf(key);
    const said = h?.said ?? ''; // names the reason
    if ((heldBy.get(key) ?? '') === said) return;
    heldBy.set(key, said);
    running.get(key)?.syncer.restatus();
  };
  o.bindings.on('add', rehold);
  o.bindings.on('update', rehold);
  o.bindings.on('delete', (b) => void heldBy.delete(objectKey(b)));
  controller.watch(o.crds, (c) => named(c.metadata!.name!));
  return {
    controller,
    keysOf: (conn) => keys(() => true).filter((k) => connections.of(k) === conn),
    keysNamed: (name, conn) => named(name).filter((k) => connections.of(k) === conn),
    stopAll: async () => {
      await Promise.all([...running.keys()].map(release));
    },
  };
}
