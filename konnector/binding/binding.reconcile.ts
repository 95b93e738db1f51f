/**
 * The APIServiceBinding reconcile: the one writer of a binding's status, and the owner of its lifecycle.
 *
 * Bound: kubeconfig Secret (SecretValid) → provider connection (Connected) → APIServiceExport → CRD (SchemaInSync)
 * → permission to use the resource in the app cluster → syncer (InformersSynced) → heartbeat (Heartbeating, and
 * KubeconfigCurrent: the provider's rotated kubeconfig was not refused) → Ready.
 *
 * Deleted — the order that never strands a claim behind its finalizer (kube-bind #352: deleting the binding
 * garbage-collected the CRD, whose objects then waited forever for a syncer that was already gone):
 *   1. the binding keeps its finalizer, its provider connection and its syncer running;
 *   2. every app-cluster object of the API is deleted; the syncer deletes each copy upstream, waits until it is
 *      gone, then releases the object's finalizer (claims are never orphaned upstream);
 *   3. once no object is left, the CRD (only if this binding owns it) is deleted and awaited;
 *   4. the syncer stops, the connection is released, and the binding's finalizer goes.
 * If the provider is unreachable, step 2 waits (the binding says so) instead of skipping the upstream deletion.
 */
import type { KubernetesObject, V1CustomResourceDefinition, V1Secret } from '@kubernetes/client-node';
import {
  BINDING_FINALIZER,
  APIServiceBindingConditions as C,
  SYNCER_FIELD_MANAGER,
  type APIServiceBinding,
  type APIServiceExport,
  type Condition,
} from '../../exports/bind-api';
import type { WatchInformer } from '../../controller';
import { withSummary, type ConditionInput } from '../conditions';
import { applyPatch, isForbidden, isNotFound, mergePatch, messageOf } from '../kube/client';
import { controllerOf, hasFinalizer, isDeleting, jsonEqual, viewOf, type Obj, type ResourceRef } from '../kube/objects';
import type { ProviderConnection } from '../provider/connection';
import type { Connections } from '../provider/connections';
import { metaPatch } from '../provider/export/spec/spec.controller';
import { resourceClient } from '../provider/export/context';
import { ExportSyncer } from '../provider/export/syncer';
import { BindResources, type Runtime } from '../runtime';
import { crdEstablished, exportMismatch, schemaDecision } from '../schema/schema';
import { accessNeeded, missingAccess } from './access';
import { checkKubeconfigSecret } from './kubeconfig';

/** Claimed resources the konnector copies. */
const COPYABLE = ['secrets', 'configmaps'];
/** Whether the provider's kubeconfig was copied at the last heartbeat, or refused (not in the bind API's list: ours). */
export const KUBECONFIG_CURRENT = 'KubeconfigCurrent';
/** How often a healthy binding's status is refreshed (heartbeat, informers). */
const REFRESH_MS = 60_000;
const RETRY_MS = 2_000;

export interface BindingReconcilerOptions {
  readonly rt: Runtime;
  readonly bindings: WatchInformer<KubernetesObject>;
  readonly crds: WatchInformer<V1CustomResourceDefinition>;
  readonly connections: Connections<ProviderConnection>;
  /** Starts watching kubeconfig Secrets in a namespace. */
  watchSecrets(namespace: string): void;
  /** Enqueues a binding key. */
  enqueue(key: string): void;
}

interface Bound {
  readonly syncer: ExportSyncer;
  /** What the syncer was started for; a change restarts it. */
  readonly fingerprint: string;
}

export class BindingReconciler {
  private readonly bound = new Map<string, Bound>();
  /** The kubeconfig Secret (`namespace/name`) each binding key uses. */
  private readonly secretOf = new Map<string, string>();
  private readonly view;
  constructor(private readonly o: BindingReconcilerOptions) {
    this.view = viewOf<APIServiceBinding>(o.bindings);
  }

  /** Bindings whose names match (an export or CRD of that name changed). */
  keysNamed(name: string): string[] {
    return this.view
      .list()
      .filter((b) => b.metadata.name === name)
      .map((b) => `${b.metadata.namespace}/${b.metadata.name}`);
  }

  /** Bindings using a kubeconfig Secret. */
  keysUsingSecret(namespace: string, name: string): string[] {
    return this.view
      .list()
      .filter((b) => b.spec.kubeconfigSecretRef.namespace === namespace && b.spec.kubeconfigSecretRef.name === name)
      .map((b) => `${b.metadata.namespace}/${b.metadata.name}`);
  }

  /** Bindings that use a connection. */
  keysOf(conn: ProviderConnection): string[] {
    return this.view
      .list()
      .map((b) => `${b.metadata.namespace}/${b.metadata.name}`)
      .filter((k) => this.o.connections.of(k) === conn);
  }

  async reconcile(key: string): Promise<{ requeueAfterMs: number } | undefined> {
    try {
      return await this.reconcileBinding(key);
    } catch (e) {
      throw new Error(`cannot reconcile APIServiceBinding ${key}: ${messageOf(e)}`, { cause: e });
    }
  }

  private async reconcileBinding(key: string): Promise<{ requeueAfterMs: number } | undefined> {
    const [namespace, name] = key.split('/') as [string, string];
    const b = this.view.get(name, namespace);
    const ready = this.o.rt.metrics.bindingReady;
    if (!b || isDeleting(b)) ready.remove({ namespace, binding: name });
    if (!b) {
      await this.teardown(key);
      return undefined;
    }
    if (isDeleting(b)) return this.remove(key, b);
    if (!hasFinalizer(b, BINDING_FINALIZER)) {
      await this.bindings().patch(namespace, name, metaPatch(b, [...(b.metadata.finalizers ?? []), BINDING_FINALIZER], {}));
    }
    const s = await this.bind(key, b);
    await this.writeStatus(b, s.conditions, s.prettyName);
    const isReady = s.conditions.every((c) => c.status === true);
    ready.set({ namespace, binding: name }, isReady ? 1 : 0);
    return isReady ? { requeueAfterMs: REFRESH_MS } : { requeueAfterMs: s.retryMs ?? RETRY_MS * 5 };
  }

  /**
   * Everything up to a running syncer; returns the conditions that say how far it got. While the binding is being
   * deleted (`removing`), the CRD is never applied: the cache may already miss a CRD `remove` just deleted, and
   * applying it would make it again and strand it once the binding is gone.
   */
  private async bind(
    key: string,
    b: APIServiceBinding,
    removing = false,
  ): Promise<{ conditions: ConditionInput[]; prettyName?: string; retryMs?: number; syncer?: ExportSyncer }> {
    const { rt } = this.o;
    const ref = b.spec.kubeconfigSecretRef;
    const conds: ConditionInput[] = [];
    const unknown = (types: string[], why: string) =>
      types.forEach((type) => conds.push({ type, status: 'Unknown', reason: 'Waiting', message: why }));

    this.o.watchSecrets(ref.namespace);
    const check = checkKubeconfigSecret(ref, await this.readSecret(ref.namespace, ref.name));
    if (!check.ok) {
      conds.push({ type: C.SecretValid, status: false, reason: check.reason, message: check.message });
      // A connection already open keeps serving with the credentials it has: losing the Secret loses no data.
      if (!this.o.connections.of(key)) {
        unknown(
          [C.Connected, C.SchemaInSync, C.InformersSynced, C.Heartbeating, KUBECONFIG_CURRENT],
          'waiting for a valid kubeconfig Secret',
        );
        return { conditions: conds, retryMs: 30_000 };
      }
    } else conds.push({ type: C.SecretValid, status: true, reason: 'SecretValid' });

    const conn = check.ok ? await this.o.connections.acquire(key, check) : (this.o.connections.of(key) as ProviderConnection);
    conn.targets.set(`${ref.namespace}/${ref.name}`, { namespace: ref.namespace, name: ref.name, key: ref.key });
    this.secretOf.set(key, `${ref.namespace}/${ref.name}`);
    if (!conn.hasSynced()) {
      const err = conn.lastError();
      conds.push({
        type: C.Connected,
        status: err ? false : 'Unknown',
        reason: err ? 'ProviderUnreachable' : 'Connecting',
        message: err ? `cannot reach the provider ${conn.server} (namespace ${conn.namespace}): ${err}` : `connecting to ${conn.server}`,
      });
      unknown([C.SchemaInSync, C.InformersSynced, C.Heartbeating, KUBECONFIG_CURRENT], 'waiting for the provider connection');
      return { conditions: conds };
    }
    conds.push({ type: C.Connected, status: true, reason: 'Connected', message: `${conn.server}, namespace ${conn.namespace}` });
    const prettyName = conn.clusterBinding()?.spec.providerPrettyName;

    const exp = conn.exportView.get(b.metadata.name!, conn.namespace);
    // Names come from the binding: an export that describes another resource than its name says is refused before
    // anything (access checks, CRD) is done for it.
    const mismatch = exp && exportMismatch(exp, b);
    if (mismatch) {
      conds.push({ type: C.SchemaInSync, status: false, reason: 'ExportNameMismatch', message: mismatch });
      unknown([C.InformersSynced], 'waiting for the schema');
      conds.push(this.heartbeating(conn), this.kubeconfigCurrent(conn, ref));
      return { conditions: conds, prettyName, retryMs: 30_000 };
    }
    const claims = (b.spec.permissionClaims ?? []).filter(
      (c) => c.state === 'Accepted' && (c.group ?? '') === '' && COPYABLE.includes(c.resource) && c.selector?.owner !== 'Consumer',
    );
    // Permission first: without it the konnector must not even create the CRD it could not manage afterwards.
    const wanted = exp && resourceOf(exp);
    if (wanted) {
      const missing = await missingAccess(
        rt.consumer.authz,
        accessNeeded(
          wanted,
          claims.map((c) => c.resource),
        ),
      );
      if (missing.length) {
        conds.push({
          type: C.InformersSynced,
          status: false,
          reason: 'Forbidden',
          message: rt.controlPlaneMode
            ? `the app cluster's kubeconfig may not ${missing.join(', ')}; bind its user to the ClusterRole of dist/app-cluster/control-plane-konnector/clusterrole.yaml (the AppClusterRole construct), see docs/app-cluster-binding.md`
            : `the konnector may not ${missing.join(', ')} in this cluster; grant access to this API: kubectl apply -f dist/app-cluster/konnector/access/${wanted.resource}.yaml (the KonnectorApiAccess construct), see docs/konnector.md`,
        });
        conds.push({ type: C.SchemaInSync, status: 'Unknown', reason: 'Forbidden', message: 'waiting for access to the API' });
        conds.push(this.heartbeating(conn), this.kubeconfigCurrent(conn, ref));
        return { conditions: conds, prettyName, retryMs: 10_000 };
      }
    }
    const schema = await this.syncSchema(b, exp, conn, removing);
    conds.push(schema.condition);
    if (!schema.resource) {
      unknown([C.InformersSynced], 'waiting for the schema');
      conds.push(this.heartbeating(conn), this.kubeconfigCurrent(conn, ref));
      return { conditions: conds, prettyName };
    }

    const fingerprint = JSON.stringify([conn.key, schema.resource, schema.statusSubresource, claims]);
    let bound = this.bound.get(key);
    if (bound && bound.fingerprint !== fingerprint) {
      await bound.syncer.stop();
      bound = undefined;
    }
    if (!bound) {
      const syncer = new ExportSyncer({
        rt,
        conn,
        resource: schema.resource,
        statusSubresource: schema.statusSubresource,
        name: key,
        claims,
        onConsumerChange: () => {
          if (this.view.get(b.metadata.name!, b.metadata.namespace)?.metadata.deletionTimestamp) this.o.enqueue(key);
        },
      });
      bound = { syncer, fingerprint };
      this.bound.set(key, bound);
      syncer.start();
    }
    const synced = bound.syncer.hasSynced();
    const err = bound.syncer.lastError();
    conds.push(
      synced
        ? { type: C.InformersSynced, status: true, reason: 'InformersSynced' }
        : {
            type: C.InformersSynced,
            status: err ? false : 'Unknown',
            reason: err ? 'WatchFailed' : 'Syncing',
            message: err ?? 'listing objects',
          },
    );
    conds.push(this.heartbeating(conn), this.kubeconfigCurrent(conn, ref));
    return { conditions: conds, prettyName, syncer: bound.syncer, retryMs: synced ? undefined : 1_000 };
  }

  /** Whether the last heartbeat refused the provider's kubeconfig for this binding's Secret (the old one stays). */
  private kubeconfigCurrent(conn: ProviderConnection, ref: { namespace: string; name: string }): ConditionInput {
    const r = conn.refusedRotations.get(`${ref.namespace}/${ref.name}`);
    if (r) return { type: KUBECONFIG_CURRENT, status: false, reason: r.reason, message: r.message, severity: 'Warning' };
    return { type: KUBECONFIG_CURRENT, status: true, reason: 'KubeconfigCurrent' };
  }

  private heartbeating(conn: ProviderConnection): ConditionInput {
    const h = conn.heartbeat;
    if (h.error) return { type: C.Heartbeating, status: false, reason: 'HeartbeatFailed', message: h.error };
    if (!h.at) return { type: C.Heartbeating, status: 'Unknown', reason: 'FirstHeartbeatPending', message: 'no heartbeat written yet' };
    return { type: C.Heartbeating, status: true, reason: 'Heartbeating', message: `last heartbeat ${h.at.toISOString()}` };
  }

  /** Export → CRD; the resource to sync once the CRD is served. */
  private async syncSchema(
    b: APIServiceBinding,
    exp: ReturnType<ProviderConnection['exportView']['get']>,
    conn: ProviderConnection,
    removing: boolean,
  ): Promise<{ condition: ConditionInput; resource?: ResourceRef; statusSubresource: boolean }> {
    const type = C.SchemaInSync;
    if (!exp)
      return {
        condition: {
          type,
          status: false,
          reason: 'ExportNotFound',
          message: `no APIServiceExport ${b.metadata.name} in provider namespace ${conn.namespace}: the provider has not exported this API to this cluster (run kubectl bind for it)`,
        },
        statusSubresource: false,
      };
    const existing = this.o.crds.get(b.metadata.name!);
    const d = schemaDecision(exp, b, existing);
    if (d.action === 'refuse')
      return { condition: { type, status: false, reason: d.reason, message: d.message }, statusSubresource: false };
    if (d.action === 'apply' && removing)
      return {
        condition: {
          type,
          status: 'Unknown',
          reason: 'CustomResourceDefinitionDeleting',
          message: 'the binding is being deleted: its CRD is not made again',
        },
        statusSubresource: false,
      };
    if (d.action === 'apply') {
      await this.o.rt.consumer.crds.patchCustomResourceDefinition(
        { name: d.crd.metadata.name, body: d.crd, fieldManager: SYNCER_FIELD_MANAGER, force: true },
        applyPatch,
      );
      this.o.rt.log.info({ crd: d.crd.metadata.name, binding: b.metadata.name }, 'applied the CRD from the APIServiceExport');
    }
    const crd = this.o.crds.get(b.metadata.name!);
    if (d.action === 'apply' || !crdEstablished(crd))
      return {
        condition: { type, status: 'Unknown', reason: 'Establishing', message: 'waiting for the CRD to be established' },
        statusSubresource: false,
      };
    const version = exp.spec.versions.find((v) => v.served && v.storage) ?? exp.spec.versions.find((v) => v.served);
    if (!version)
      return {
        condition: { type, status: false, reason: 'NoServedVersion', message: `APIServiceExport ${exp.metadata.name} serves no version` },
        statusSubresource: false,
      };
    return {
      condition: { type, status: true, reason: 'SchemaInSync' },
      resource: {
        group: exp.spec.group,
        version: version.name,
        resource: exp.spec.names.plural,
        kind: exp.spec.names.kind,
        namespaced: true,
      },
      statusSubresource: version.subresources?.status !== undefined,
    };
  }

  /** The deletion order (see the top of this file). */
  private async remove(key: string, b: APIServiceBinding): Promise<{ requeueAfterMs: number } | undefined> {
    if (!hasFinalizer(b, BINDING_FINALIZER)) {
      await this.teardown(key);
      return undefined;
    }
    const crd = this.o.crds.get(b.metadata.name!);
    const owned = crd !== undefined && controllerOf(crd)?.uid === b.metadata.uid;
    if (owned) {
      const s = await this.bind(key, b, true);
      const syncer = s.syncer;
      if (!syncer || !syncer.hasSynced()) {
        await this.writeStatus(
          b,
          [...s.conditions, deleting('cannot delete the objects of this API yet: the syncer is not running (see the other conditions)')],
          s.prettyName,
        );
        return { requeueAfterMs: 5_000 };
      }
      const objs = syncer.consumerObjects();
      if (objs.length) {
        const client = resourceClient(this.o.rt.consumer, syncer.x.resource);
        await Promise.all(
          objs.filter((o) => !isDeleting(o)).map((o) => client.delete(o.metadata.namespace!, o.metadata.name, o.metadata.uid ?? '')),
        );
        await this.writeStatus(
          b,
          [
            ...s.conditions,
            deleting(`deleting: ${objs.length} ${syncer.x.resource.kind} object(s) wait for their provider copies to be deleted`),
          ],
          s.prettyName,
        );
        return { requeueAfterMs: 5_000 };
      }
      if (!crd.metadata?.deletionTimestamp) {
        this.o.rt.log.info({ crd: b.metadata.name }, 'binding deleted and its objects gone: deleting its CRD');
        await this.o.rt.consumer.crds
          .deleteCustomResourceDefinition({ name: b.metadata.name!, body: { preconditions: { uid: crd.metadata!.uid } } })
          .catch((e: unknown) => {
            if (!isNotFound(e)) throw e;
          });
      }
      return { requeueAfterMs: 2_000 }; // the CRD's deletion event brings us back
    }
    await this.teardown(key);
    await this.bindings().patch(
      b.metadata.namespace!,
      b.metadata.name!,
      metaPatch(
        b,
        (b.metadata.finalizers ?? []).filter((f) => f !== BINDING_FINALIZER),
        {},
      ),
    );
    return undefined;
  }

  private async teardown(key: string): Promise<void> {
    const bound = this.bound.get(key);
    this.bound.delete(key);
    await bound?.syncer.stop();
    // The heartbeat keeps a kubeconfig Secret current only while some binding uses it.
    const secret = this.secretOf.get(key);
    this.secretOf.delete(key);
    const conn = this.o.connections.of(key);
    if (conn && secret && ![...this.secretOf.entries()].some(([k, s]) => s === secret && this.o.connections.of(k) === conn))
      conn.targets.delete(secret);
    await this.o.connections.release(key);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.bound.keys()].map((k) => this.teardown(k)));
  }

  private bindings() {
    const r = BindResources.bindings;
    return resourceClient(this.o.rt.home, {
      group: r.group,
      version: r.version,
      resource: r.plural,
      kind: 'APIServiceBinding',
      namespaced: true,
    });
  }

  private async readSecret(namespace: string, name: string): Promise<V1Secret | undefined | 'forbidden'> {
    const cached = this.o.rt.kubeconfigSecret(namespace, name);
    if (cached) return cached;
    try {
      return await this.o.rt.home.core.readNamespacedSecret({ namespace, name });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      if (isForbidden(e)) return 'forbidden';
      throw e;
    }
  }

  private async writeStatus(b: APIServiceBinding, inputs: ConditionInput[], prettyName: string | undefined): Promise<void> {
    const conditions: Condition[] = withSummary(b.status?.conditions, inputs, C.Ready, new Date());
    const status = { ...(prettyName ? { providerPrettyName: prettyName } : {}), conditions };
    if (
      jsonEqual(status, {
        ...(b.status?.providerPrettyName ? { providerPrettyName: b.status.providerPrettyName } : {}),
        conditions: b.status?.conditions,
      })
    )
      return;
    const r = BindResources.bindings;
    try {
      await this.o.rt.home.custom.patchNamespacedCustomObjectStatus(
        { ...r, namespace: b.metadata.namespace!, name: b.metadata.name!, body: { status } },
        mergePatch,
      );
    } catch (e) {
      if (!isNotFound(e))
        throw new Error(`cannot write the status of APIServiceBinding ${b.metadata.namespace}/${b.metadata.name}: ${messageOf(e)}`, {
          cause: e,
        });
    }
  }
}

/** The version the konnector syncs: the served storage version, else the first served one. */
const servedVersion = (exp: APIServiceExport) =>
  exp.spec.versions.find((v) => v.served && v.storage) ?? exp.spec.versions.find((v) => v.served);

function resourceOf(exp: APIServiceExport): ResourceRef | undefined {
  const v = servedVersion(exp);
  return v && { group: exp.spec.group, version: v.name, resource: exp.spec.names.plural, kind: exp.spec.names.kind, namespaced: true };
}

const deleting = (message: string): ConditionInput => ({ type: 'Deleting', status: false, reason: 'Deleting', message, severity: 'Info' });
