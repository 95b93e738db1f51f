/**
 * What the backend's controllers are wired from (their `x.controller.ts`): clients, the leader's informers, settings,
 * logging and metrics. Reconciles never see this bag: each takes the narrow getters and writers it needs
 * (docs/decisions/controller-shape.md).
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Warn } from '../../controller';
import type { RecordedBinder } from '../authz/binder';
import type { DefaultBindPolicy } from '../authz/bind-policy';
import type { LeaderInformers, ObjectInformers, ServingInformers } from '../informers';
import type { BackendClients } from '../kube';
import type { ClaimedAccess, ConsumerScope } from '../consumer-access';
import type { BackupStoreSettings } from '../backup-store/tenant';
import type { StoreObjects } from '../backup-store/objects';
import type { StoreAdmin } from '../backup-store/versitygw';
import type { Consumer } from '../provision/consumer';
import type { KubeconfigTarget, TokenPolicy } from '../provision/kubeconfig';

export interface ControllerDeps {
  readonly clients: BackendClients;
  readonly serving: ServingInformers;
  readonly leader: LeaderInformers;
  /** Metadata-only informers of the exported and claimed resources (claimed access). */
  readonly objects: ObjectInformers;
  readonly consumerScope: ConsumerScope;
  /** Who may request an API whose template has no bind rule (--default-bind-policy; authz/bind-policy.ts). */
  readonly defaultBindPolicy: DefaultBindPolicy;
  /** @default 'Object' */
  readonly claimedAccess?: ClaimedAccess;
  /**
   * The backend's `--namespace-prefix`: it manages only cluster namespaces `<prefix>-…` (and the provider namespaces
   * made for them), so backends with other prefixes on one cluster never undo each other.
   */
  readonly prefix: string;
  readonly target: KubeconfigTarget;
  readonly tokens: TokenPolicy;
  /** How long a request waits for its CRD. @default CRD_WAIT_MS (a minute, as Klutch) */
  readonly exportRequestTimeoutMs?: number;
  /** A cluster namespace without an export for this long is deleted. @default 1h */
  readonly unboundConsumerTtlMs?: number;
  /** A consumer without a heartbeat (or bind) for this long loses its credentials. @default 720h */
  readonly abandonedConsumerAfterMs?: number;
  /** An adopted Klutch consumer's legacy token goes after a heartbeat this long after its rotated token. @default 10m */
  readonly legacyTokenGraceMs?: number;
  /** An adopted Klutch consumer's legacy token goes this long after the adoption, heartbeat or not. @default 168h */
  readonly legacyTokenMaxAgeMs?: number;
  /**
   * Finds or makes a consumer, exactly as a bind through /bind does (provision/consumer.ts); the AppClusterBinding
   * controller provisions its app clusters with it. Without it that controller does not run.
   */
  readonly provision?: (identity: string, who: RecordedBinder) => Promise<Consumer>;
  /** The image of the konnector Deployments AppClusterBindings get (--konnector-image). */
  readonly konnectorImage?: string;
  /** The images their overrides may name besides (--konnector-allowed-images). @default none */
  readonly konnectorAllowedImages?: readonly string[];
  /** How many AppClusterBindings of one namespace are bound (--max-app-cluster-bindings). @default MAX_APP_CLUSTER_BINDINGS */
  readonly maxAppClusterBindings?: number;
  /** The most their overrides may give a konnector, per resource (--konnector-max-resources). @default KONNECTOR_MAX_RESOURCES */
  readonly konnectorMaxResources?: Readonly<Record<string, string>>;
  /** The ports the root namespaces' NetworkPolicy opens to konnectors (--konnector-api-ports). @default 443, 6443 */
  readonly konnectorApiPorts?: readonly number[];
  /** Whose Pods may scrape the root konnectors' probe port (--monitoring-namespace). @default none */
  readonly monitoringNamespace?: string;
  /** The ResourceQuota `klutch-claims` of every provider namespace (--claim-quota). @default none */
  readonly claimQuota?: Readonly<Record<string, string>>;
  /** The object store each provider namespace gets a backup tenant in (--backup-store-*). @default none */
  readonly backupStore?: {
    readonly admin: StoreAdmin;
    readonly settings: BackupStoreSettings;
    /** What the sweep of deleted instances' and tenants' backups reads and deletes (backup-store/janitor.ts). */
    readonly sweep: { readonly objects: StoreObjects; readonly keepMs: number; readonly intervalMs: number };
  };
  readonly log: Logger;
  readonly registry: Registry;
  /** Warning Events on the objects the controllers refuse or act against (controller/events.ts). @default none */
  readonly warn?: Warn;
}

/** Whether `namespace` (a cluster namespace, or a provider namespace made for one) is this backend's. */
export function ours(d: Pick<ControllerDeps, 'prefix'>, namespace: string | undefined): boolean {
  return Boolean(namespace?.startsWith(`${d.prefix}-`));
}
