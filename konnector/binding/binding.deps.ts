/**
 * What the APIServiceBinding reconcile works with (narrow, so its test injects plain functions; binding.controller.ts
 * builds them from clients, informers and the konnector's connections), and the values its steps decide.
 */
import type { V1CustomResourceDefinition, V1Secret } from '@kubernetes/client-node';
import type { ObjectRef } from '../../controller';
import type { AcceptablePermissionClaim, APIServiceBinding, APIServiceBindingStatus, KubeconfigSecretRef } from '../../exports/bind-api';
import type { AccessCheck } from '../../lib/app-cluster-access';
import type { Obj, ResourceRef } from '../kube/objects';
import type { Upstream } from '../provider/export/conversion';
import type { ProviderConnection } from '../provider/connection';
import type { ConnectionSource } from '../provider/connections';
import type { ExportSyncer } from '../provider/export/syncer';
import type { BindingCondition } from './binding.conditions';

/** What the reconcile reads of a provider connection. */
export type BindingConnection = Pick<
  ProviderConnection,
  'server' | 'namespace' | 'hasSynced' | 'lastError' | 'clusterBinding' | 'heartbeat' | 'refusedRotations'
> & { readonly exports: Pick<ProviderConnection['exports'], 'get'> };

/** What the reconcile reads of a running syncer. */
export type RunningSyncer = Pick<ExportSyncer, 'hasSynced' | 'lastError' | 'consumerObjects'>;

/** What a syncer is started for; a change restarts it. */
export interface SyncerSpec {
  readonly resource: ResourceRef;
  /** The control plane's version, where it stores another (provider/export/conversion.ts). */
  readonly upstream?: Upstream;
  readonly statusSubresource: boolean;
  /** Whether the resource's status has conditions: its Ready condition names what holds it (lib/claim-hold.ts). */
  readonly statusConditions: boolean;
  readonly claims: readonly AcceptablePermissionClaim[];
}

export interface BindingDeps {
  /** Running on the control plane for an AppClusterBinding: messages name that setup's fixes. */
  readonly controlPlaneMode: boolean;
  /** This konnector's release, compared with the control plane's (binding.conditions.ts). @default KONNECTOR_VERSION */
  readonly version?: string;
  now(): Date;
  /** The binding from the cache. */
  getBinding(ref: ObjectRef): APIServiceBinding | undefined;
  /** An app-cluster CRD from the cache. */
  getCrd(name: string): V1CustomResourceDefinition | undefined;
  /** The binding's kubeconfig Secret (cached, else read; its namespace is watched from now on); 'forbidden': may not. */
  readKubeconfigSecret(ref: KubeconfigSecretRef): Promise<V1Secret | undefined | 'forbidden'>;
  /** The provider connection the binding holds, if any. */
  connectionOf(key: string): BindingConnection | undefined;
  /**
   * Opens (or rotates, or, without `source`, keeps) the binding's provider connection, whose heartbeat keeps `secret`
   * current from now on.
   */
  connect(key: string, source: ConnectionSource | undefined, secret: KubeconfigSecretRef): Promise<BindingConnection>;
  /** The checks the konnector fails in the app cluster (SelfSubjectAccessReviews), as "verb resource" phrases. */
  missingAccess(checks: readonly AccessCheck[]): Promise<string[]>;
  /** Asks these checks again next time instead of trusting a remembered "allowed" (lib/access-cache.ts). */
  forgetAccess(checks: readonly AccessCheck[]): void;
  /** Server-side applies a CRD. */
  applyCrd(crd: Obj): Promise<void>;
  /** Deletes the CRD with this uid (gone already is fine). */
  deleteCrd(name: string, uid: string | undefined): Promise<void>;
  /** The binding's syncer on its connection: started, kept, or restarted when `spec` or the connection changed. */
  runSyncer(key: string, spec: SyncerSpec): Promise<RunningSyncer>;
  /** Deletes an app-cluster object of a bound resource (gone already is fine). */
  deleteConsumerObject(resource: ResourceRef, o: Obj): Promise<void>;
  /** Stops the binding's syncer and releases its connection (and the Secret it kept current). */
  release(key: string): Promise<void>;
  setFinalizers(b: APIServiceBinding, finalizers: string[]): Promise<void>;
  /** The one status write of a reconcile (gone already is fine). */
  writeStatus(ref: ObjectRef, status: APIServiceBindingStatus): Promise<void>;
  /** The binding's Ready gauge; undefined removes it. */
  setReady(ref: ObjectRef, ready: boolean | undefined): void;
}

/** How far binding got: the conditions that say so, and what the later steps need. */
export interface Progress {
  readonly conditions: BindingCondition[];
  readonly prettyName?: string;
  /** Look again this soon (not Ready). */
  readonly retryMs?: number;
  /** The syncer and its resource, once running. */
  readonly syncer?: RunningSyncer;
  readonly resource?: ResourceRef;
}

/** What a reconcile decided: the status to hold (none: leave it) and when to look again. */
export interface Outcome {
  readonly status?: Pick<Progress, 'conditions' | 'prettyName'>;
  readonly requeueAfterMs?: number;
}
