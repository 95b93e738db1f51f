/**
 * Every reason an APIServiceBinding's condition can carry, the one list the konnector's conditions are typed by and the
 * claims read: a reason the konnector can write while the binding is not Ready has its words here, or tsc fails.
 *
 * The words say what the reason means to whoever reads a claim of the binding, and carry nothing of the binding's own
 * message: the claim is read by every reader of its namespace, while the binding's message names the control plane's
 * server, the binding's namespace there, Secrets and ClusterRoles of the konnector's namespace, and error texts that
 * only the cluster's administrator should see (issue 34).
 */

/** Reasons of a condition that is not True, and what each means to a reader of the binding's claims. */
const BINDING_HOLD_REASONS = {
  Waiting: 'the binding is being set up',
  SecretNotFound: "the binding's kubeconfig Secret is missing",
  SecretForbidden: "the konnector may not read the binding's kubeconfig Secret",
  KubeconfigMissing: "the binding's kubeconfig Secret holds no kubeconfig",
  KubeconfigInvalid: "the binding's kubeconfig cannot be used",
  KubeconfigUnsafe: "the binding's kubeconfig is refused as unsafe",
  KubeconfigMoved:
    'the control plane handed out a kubeconfig for another server, which is refused: the one kept works until its token expires',
  Connecting: 'the konnector is connecting to the control plane',
  ProviderUnreachable: 'the konnector has lost the control plane and retries',
  ExportNotFound: 'the control plane no longer exports the API',
  ExportNameMismatch: "the control plane's export does not match the binding",
  ClusterScopedNotSupported: 'the control plane exports the API as cluster-scoped, which the konnector does not sync',
  NoServedVersion: "the control plane's export serves no version of the API",
  ForeignCustomResourceDefinition: "this cluster's definition of the API belongs to something else, which the konnector does not overwrite",
  CustomResourceDefinitionDeleting: "this cluster's definition of the API is being deleted",
  Establishing: "this cluster's definition of the API is being established",
  Forbidden: 'the konnector is not allowed what the binding needs',
  Syncing: "the konnector is reading the API's objects for the first time",
  WatchFailed: "the konnector cannot watch the API's objects on the control plane",
  FirstHeartbeatPending: 'the konnector has not written its first heartbeat yet',
  HeartbeatFailed: 'the konnector cannot write its heartbeat to the control plane',
  KonnectorNewer: "the control plane's release is older than this cluster's konnector supports",
  Deleting: 'the binding is being deleted',
} as const satisfies Readonly<Record<string, string>>;

/** Reasons of a condition that is True: never the reason of a binding that is not Ready. */
type BindingOkReason =
  'SecretValid' | 'Connected' | 'SchemaInSync' | 'InformersSynced' | 'Heartbeating' | 'KubeconfigCurrent' | 'Supported';

export type BindingHoldReason = keyof typeof BINDING_HOLD_REASONS;
export type BindingReason = BindingHoldReason | BindingOkReason;

/** What `reason` means to a reader of the binding's claims; undefined for one this konnector does not write. */
export const bindingReasonMeans = (reason: string): string | undefined =>
  Object.hasOwn(BINDING_HOLD_REASONS, reason) ? BINDING_HOLD_REASONS[reason as BindingHoldReason] : undefined;
