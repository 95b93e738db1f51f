/**
 * The vocabulary of a composition recipe: how the fields of a data-service API reach one backend's resource.
 *
 * A recipe is data. Backend modules (backends/) produce recipes for the catalog (apis/); synth writes them into
 * each Composition's step input (`inputFor`, input.ts); the function (functions/dataservices/) executes them and
 * knows no backend. Everything a backend means — which resource, whether it is wrapped in another (a
 * provider-kubernetes Object), which fields the platform adds, where it reports failure, where credentials come
 * from — is said here, so adding a backend never changes the function.
 *
 * Field paths use Crossplane's fieldpath syntax: `spec.parameters.maxConnections`,
 * `metadata.labels[crossplane.io/claim-name]`, `spec.items[0].name`.
 */

/** A backend's name, a DNS label: it prefixes its Compositions (`a9s-postgresql`). */
export type Backend = string;

/** A step applied to a value on its way from the composite to the composed resource. */
export type Transform =
  /** `a9s-postgresql13` with prefix `a9s-postgresql` → `13`. */
  | { readonly type: 'trimPrefix'; readonly prefix: string }
  /** A decimal string → an integer (`'13'` → `13`). */
  | { readonly type: 'toInteger' }
  /** `DEBUG1` → `debug1` (a8s expects lower-case PostgreSQL log levels). */
  | { readonly type: 'lowercase' }
  /** `%s` in `format` is replaced by the value (`%s-service-broker`). */
  | { readonly type: 'format'; readonly format: string }
  /**
   * A lookup; a value missing from the map is an error. `settings` names, for keys of the map, the platform setting
   * that replaces the map's value when synth is given it (`cnpg.image.a9s-postgresql15`: an image pinned by digest);
   * synth resolves them, so the function never sees `settings`.
   */
  | {
      readonly type: 'map';
      readonly map: Readonly<Record<string, unknown>>;
      readonly settings?: Readonly<Record<string, string>>;
    };

export const TRANSFORM_TYPES = ['trimPrefix', 'toInteger', 'lowercase', 'format', 'map'] as const;

/** Sets one field of the composed resource, from a composite field, a constant, or a synth setting. */
export interface FieldMapping {
  /** Path in the composed resource (for a wrapped resource: in the wrapped object, not the wrapper). */
  readonly to: string;
  /** Path in the composite resource. Exactly one of `from`, `value` and `setting` is set. */
  readonly from?: string;
  /** A constant. */
  readonly value?: unknown;
  /**
   * A platform setting synth fills in (`a9s.organizationGuid`), from its options or else `default`; it becomes a
   * `value` in the Composition, so the function never sees it.
   */
  readonly setting?: string;
  /** Applied in order to the value read from `from`. */
  readonly transforms?: readonly Transform[];
  /** Used when `from` (or `setting`) is not set; without a default, a missing `from` skips the field. */
  readonly default?: unknown;
  /** A composite without `from` set is an error (Fatal result) rather than a skipped field. */
  readonly required?: boolean;
  /**
   * The most UTF-8 bytes the value may have once transformed (PostgreSQL keeps 63 of a role's name): a longer one
   * fails the composition (a Fatal result naming the field, the value's length and `fix`); in a related list's item,
   * the item is left out and its own composite says why.
   */
  readonly limit?: { readonly bytes: number; readonly fix: string };
  /**
   * Set only when this composite field is set (anything but null), or only when it is not: one of two exclusive shapes
   * of the composed resource (a cnpg instance bootstraps by `initdb`, or by `recovery` when the claim has
   * `restoreFrom`).
   */
  readonly ifSet?: string;
  readonly ifUnset?: string;
}

/** Moves one claim parameter to the key the backend expects. */
export interface ParameterMapping {
  /** Path below the composite's `spec.parameters` (`maxConnections`, `setClusterParameter.changeStreamOptions`). */
  readonly from: string;
  /** Path below `Recipe.parametersTo` in the composed resource (`max_connections`, `tempFileLimitKiloBytes`). */
  readonly to: string;
  readonly transforms?: readonly Transform[];
}

/** Copies one observed field of the composed resource back to the composite. */
export interface StatusMapping {
  /** Path in the observed composed resource (for a wrapped resource, in the wrapper: `status.atProvider.manifest.status`). */
  readonly from: string;
  /** Path in the composite, below `status` (`status.managed.state`). */
  readonly to: string;
}

/** The composed resource's ProviderConfig: a fixed name, or one formatted from a composite field. */
export interface ProviderConfigSelector {
  readonly name?: string;
  readonly fromFieldPath?: string;
  /** With `fromFieldPath`: `%s` is replaced by the field's value (`%s-service-broker`). */
  readonly format?: string;
  /**
   * The reference's `kind`, which a namespaced (Crossplane v2) managed resource requires: `ClusterProviderConfig`
   * or `ProviderConfig` (one in its own namespace). Legacy cluster-scoped managed resources have none.
   */
  readonly kind?: string;
}

/** Per-plan field values, for backends whose resources are sized by the composition (a8s). */
export interface PlanTable {
  /** Path in the composite that holds the plan name. */
  readonly fromFieldPath: string;
  /** plan name → (path in the composed resource → value). A plan missing here is an error. */
  readonly plans: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/**
 * The resource is wrapped in another that a provider reconciles (provider-kubernetes' Object): the composed
 * resource is the wrapper, the resource sits at `manifestAt`, named and namespaced like the claim (on a namespaced
 * v2 composite without a claim: like the composite).
 */
export interface Wrapper {
  readonly apiVersion: string;
  readonly kind: string;
  /** Path of the wrapped resource in the wrapper (`spec.forProvider.manifest`). */
  readonly manifestAt: string;
  /** Fields set on the wrapper itself (provider-kubernetes' `spec.readiness`: when the wrapped object counts as ready). */
  readonly fields?: readonly FieldMapping[];
  /**
   * The wrapped resource is cluster-scoped (a legacy managed resource inside a namespaced v2 Object): it is named
   * `<claim-namespace>.<claim-name>`, unique cluster-wide because a namespace has no dot, gets no namespace, and
   * carries the composed resource's labels, which its provider may read (the claim labels). @default false
   */
  readonly clusterScoped?: boolean;
  /**
   * The wrapped resource is a managed resource of another provider (provider-anynines' inside provider-kubernetes'
   * Object): its own ProviderConfig, set at its `spec.providerConfigRef`. The recipe's `providerConfig` is the
   * wrapper's.
   */
  readonly manifestProviderConfig?: ProviderConfigSelector;
  /**
   * Before it composes a wrapper for the first time, the function asks Crossplane for objects of the wrapped kind
   * that carry the claim labels (`crossplane.io/claim-name`, `crossplane.io/claim-namespace`) and the wrapped
   * resource's own `spec.providerConfigRef.name`: if one exists — the managed resource the `v1` package composed for
   * the same claim, left in place by the move to `v2` — the wrapper wraps it by its name instead of creating a new
   * one; two or more are refused, naming them. Once composed, the wrapper keeps the name it wraps. Only the platform
   * writes cluster-scoped managed resources and their claim labels, so a composite finds only its own claim's.
   * @default false
   */
  readonly adoptByClaimLabels?: boolean;
}

/** Writes the composed resource's connection details to `<claim-name><nameSuffix>` in the claim's namespace. */
export interface ConnectionSecret {
  readonly nameSuffix: string;
  /**
   * The composed resource is namespaced (a Crossplane v2 managed resource) and writes the Secret into its own
   * namespace, the composite's: its reference carries only the name (crossplane-runtime v2's LocalSecretReference).
   */
  readonly local?: boolean;
  /**
   * The wrapped resource publishes its connection details itself (a managed resource inside a provider-kubernetes
   * Object): the reference, with name and namespace, is set on it, not on the wrapper.
   */
  readonly byWrapped?: boolean;
  /**
   * For a resource that does not publish connection details itself, the Secret its backend writes and the keys to
   * publish from it: listed at `at` in the composed resource (provider-kubernetes' `spec.connectionDetails`), each a
   * `data.<key>` of the Secret `<claim-name><nameSuffix>` in the claim's namespace, after any entries the wrapper's
   * fields put there.
   */
  readonly fromSecret?: {
    readonly at: string;
    readonly nameSuffix: string;
    readonly keys: readonly string[];
    /**
     * Where the observed composed resource names the Secret once its backend reports it (the a8s binding's
     * `status.secret.name`, inside the Object): that name wins over `<claim-name><nameSuffix>`.
     */
    readonly nameFrom?: string;
  };
}

/**
 * A value the function generates the first time it composes the resource (a password the backend reads from it),
 * then keeps: read back from the observed composed resource on every later run, so it is stable across reconciles
 * and never leaves the control plane through the composite or the claim. 32 random bytes, base64url.
 */
export interface GeneratedValue {
  /** Path in the composed resource (for a wrapped resource: in the wrapped object), e.g. `stringData.password`. */
  readonly to: string;
  /**
   * Where the object as it exists in the cluster holds the value (`data.password`, base64 as in a Secret's data):
   * on a namespaced (v2) composite's first composition of the resource, the function asks Crossplane for that object
   * by its name in the composite's namespace and keeps what it holds, so a resource the v1 package's composite made
   * and the v2 one takes over keeps its password.
   */
  readonly live?: { readonly from: string; readonly base64?: boolean };
}

/** A condition on a related composite: the value at `path` equals `equals`, or the composite's own field `from`. */
export interface RelatedMatch {
  readonly path: string;
  readonly equals?: string;
  readonly from?: string;
}

/**
 * A list in the composed resource with one item per related composite of the same claim namespace (an instance's
 * bindings: one database role each). The function asks Crossplane for the composites of `apiVersion`/`kind`, and
 * which ones it may see is decided by the composite, never by what a tenant writes: for a namespaced composite
 * (Crossplane v2) those in its own namespace, for a cluster-scoped one (v1) those carrying the
 * `crossplane.io/claim-namespace` label Crossplane wrote from the real claim. Of those, the ones matching every
 * `match` and not being deleted each give an item (`item`, read from that composite). An item composed before whose
 * composite is gone (read from the observed composed resource by `key`) stays listed with `gone` (CNPG's
 * `ensure: absent`: the backend removes what it made for it).
 */
export interface RelatedList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly match: readonly RelatedMatch[];
  /** Path of the list in the composed resource (for a wrapped resource: in the wrapped object). */
  readonly to: string;
  /** The fields of one item, `from` paths read from the related composite (its trusted view). */
  readonly item: readonly FieldMapping[];
  /** The item field that names it (`name`); items are sorted by it. */
  readonly key: string;
  /** What an item whose composite is gone becomes: its key and these fields. */
  readonly gone: Readonly<Record<string, unknown>>;
  /**
   * Composites that match these instead of `match` are listed as `gone` from the start (never as items of their
   * own): an instance restored from another revokes the roles of the other's bindings, which recovery copied into
   * its database with their passwords. An item of `match` with the same key wins.
   */
  readonly revoke?: readonly RelatedMatch[];
  /**
   * A field of the related composite holding the time its credentials expire (RFC 3339; `spec.expiresAt`): from then
   * on its item is `gone`, as if the composite were deleted (Recipe.expiresAt is the composite's own side).
   */
  readonly expiresAt?: string;
  /**
   * Related composites whose credentials rotate (Recipe.rotation): the state each keeps at `statusAt` decides its
   * items. One for its first slot (`item`) and, from its first rotation on, one for its second (`item` with `second`
   * set over it); the slot whose credentials are published, and the other until its overlap ends (`retiresAt`), are
   * items, a slot past its overlap is `gone`. Keys come from `item` and `second`, never from the state.
   */
  readonly rotation?: { readonly statusAt: string; readonly second: readonly FieldMapping[] };
}

/** Composites of one kind related to the resource's composite, as RelatedList finds them (same scope rules). */
export interface RelatedComposites {
  readonly apiVersion: string;
  readonly kind: string;
  readonly match: readonly RelatedMatch[];
}

/**
 * Composites that restore the resource in place (an instance's `Restore` claims) where the backend restores only by
 * making the resource anew from a backup (CloudNativePG bootstraps a new Cluster). The function acts on each restore
 * once, oldest first, and keeps the one it acts on in the composite's status (`statusAt`), so that a restore deleted
 * half-way still completes: once the restore's backup is done, it leaves the resource out of its desired state until
 * it is gone (the backend removes what it made: Pods, volumes), then composes it again with `clear` removed and
 * `fields` set, and keeps composing it so. docs/decisions/cnpg-backups.md.
 */
export interface RestoredBy {
  /** The restore composites, and their field naming the backup's claim (`spec.backupRef`). */
  readonly restores: RelatedComposites & { readonly backupFrom: string };
  /**
   * The backup composites; a restore starts once its backup is among them with `done.equals` at `done.path`, and
   * keeps the backup's id (`idFrom`: CNPG's `backupId`, which its recovery target must name).
   */
  readonly backups: RelatedComposites & { readonly done: { readonly path: string; readonly equals: string }; readonly idFrom: string };
  /** Where the restore acted on is kept in the composite (`status.managed.restore`), for the function and people. */
  readonly statusAt: string;
  /** The annotation of the resource made anew that names its restore (the restore composite's uid). */
  readonly annotation: string;
  /** Where the observed composed resource holds the object as it exists (a wrapper's `status.atProvider.manifest`). */
  readonly observedAt: string;
  /** Removed from the resource made anew before `fields` are set (the bootstrap it was first made with). */
  readonly clear: readonly string[];
  /** Set on the resource made anew, `from` read from the kept restore: `backup` (the backup's claim name), `backupId`, `name`, `uid`. */
  readonly fields: readonly FieldMapping[];
}

/**
 * Credentials that rotate with an overlap (a cnpg binding's password): two slots, each its own user with its own
 * object, the resource (first slot) and the companion `second`. A rotation, asked by a new value of the composite's
 * `requestedFrom` or due `everyFrom` after the last one, makes the other slot current: its object gets new generated
 * values (a value is kept only from an object stamped with the slot's generation, `annotation`) and its user is
 * listed by the instance (RelatedList.rotation). Once that user works (`works`, read on the objects `errorsFrom`
 * finds), the published credentials move to it (`switched`, set over the wrapper's fields) and the other slot's user
 * keeps working for the overlap (`overlapFrom`, else `overlap`), then is revoked. The composite keeps the state at
 * `statusAt`. A rotation asked during another waits for it. docs/decisions/cnpg-rotation.md.
 */
export interface Rotation {
  /** The composite's field whose new value asks for a rotation (`spec.rotation.requested`). */
  readonly requestedFrom: string;
  /** The composite's field with the time between two rotations (a duration: `30d`, `12h`, `90m`). */
  readonly everyFrom: string;
  /** The composite's field with how long the old user keeps working once the new one's credentials are published. */
  readonly overlapFrom: string;
  /** The overlap where the composite sets none (a duration). */
  readonly overlap: string;
  /** Where the composite keeps the state (`status.managed.rotation`). */
  readonly statusAt: string;
  /** The annotation of each slot's object with the generation of the values it holds. */
  readonly annotation: string;
  /** The companion (Companion.name) holding the second slot: composed from the first rotation on, and kept. */
  readonly second: string;
  /** Wrapper fields set while the second slot's credentials are the published ones (connection details naming it). */
  readonly switched: readonly FieldMapping[];
  /**
   * When a slot's user works, on an object `errorsFrom` finds (the instance's Cluster): `users` are the two slots'
   * user names (`%s` the composite's claim name); `applied` (a format of the user) holds the version of the slot's
   * object the backend applied, which must be that object's `metadata.resourceVersion` as observed; `reconciled` is
   * a list the user must be in; `refused` (a format of the user), where the backend says why it cannot make the user:
   * while a rotation waits for it, the claim says so in the backend's words.
   */
  readonly works: {
    readonly users: readonly [string, string];
    readonly applied: string;
    readonly reconciled: string;
    readonly refused?: string;
  };
  /** Where the observed resource and companion hold the object as it exists (`status.atProvider.manifest`). */
  readonly observedAt: string;
  /**
   * The composite's field where a konnector says which credentials reached the app cluster (Annotations
   * .credentialsReceived: the receipt of a copy's `data`, lib/credentials-receipt.ts). On a composite that has one,
   * the overlap counts from when it names the current slot's credentials (`credentialsAt`); on one without (no
   * konnector, or one that writes none: Klutch's), from their publication.
   */
  readonly receivedFrom?: string;
  /**
   * Where a slot's observed resource holds its credentials as plain strings: the manifest it was composed with
   * (`spec.forProvider.manifest.stringData`). Not the object as it exists: provider-kubernetes redacts a Secret's
   * data there (`--sanitize-secrets`).
   */
  readonly credentialsAt?: string;
}

/** A condition of a diagnosed object that says why the resource waits (a Pod's `PodScheduled` `False`). */
export interface DiagnosticCondition {
  readonly type: string;
  readonly status: string;
  /** How the message is introduced (`cannot be scheduled`). @default `has <type>=<status>` */
  readonly says?: string;
}

/**
 * Objects the backend makes for the resource, outside the function's view (its Pods), whose conditions say why the
 * resource is not Ready when the backend itself does not (a Pod that cannot be scheduled because its volume claim
 * cannot bind). While the composed resource is observed and neither Ready nor failing, the function asks Crossplane
 * for the objects of `apiVersion`/`kind` carrying `labels` in the composite's namespace (v2: its own; v1: the claim's,
 * from the label Crossplane wrote), keeps only those of that namespace whose labels match, and puts the first one's
 * matching condition (by name) into the DataServiceReady message after the backend's progress; its reason is the
 * condition's. Crossplane core must be allowed to read the kind (synth's aggregated ClusterRole says so), and
 * Crossplane reconciles the composite again after the response's TTL, which is short while it waits.
 */
export interface Diagnostics {
  readonly apiVersion: string;
  readonly kind: string;
  /** The labels the objects carry, from the composite's trusted view (`cnpg.io/cluster` = the claim's name). */
  readonly labels: readonly LabelMapping[];
  /** The conditions that say why, in order of preference. */
  readonly conditions: readonly DiagnosticCondition[];
  /**
   * Pods only: a Pod that failed (phase `Failed`, as a Job's Pod does when its container exits non-zero) says so before
   * any condition: `<kind> <name> <says>: container <c> exited with <code> (<reason>)`, reason `PodFailed`. A failed
   * Pod's conditions carry no message, so the conditions above never speak for it. The recipe's `errorAdvice` applies.
   */
  readonly failed?: { readonly says: string };
  /**
   * Pods only: a Pod with a container (or init container) waiting for one of `reasons` (`ImagePullBackOff`: an image
   * the registry does not have) says so after a failed Pod and before any condition, whose words (`containers with
   * unready status`) do not name the cause: `<kind> <name> <says>: container <c> is waiting: <reason>: <message>`,
   * the condition's reason the container's.
   */
  readonly waiting?: { readonly says: string; readonly reasons: readonly string[] };
  /**
   * The volumes the backend makes for each instance of the resource, before that instance's Pods, which a
   * ResourceQuota of the namespace (the platform's `--claim-quota`, or one of the operator's own) can refuse: the API
   * server refuses the backend's PersistentVolumeClaim and the backend only logs it (CloudNativePG), so no phase says
   * why, and a Pod waiting for the volume says only that it is not found (named before the Pods' words). While the
   * resource waits with fewer volumes made (`madeAt`) than its instances get, the function asks Crossplane for the
   * namespace's ResourceQuotas and names the first (by name) that the volumes still to make, one after the other,
   * would exceed (those made are counted in the quota's use), in the API server's words (`exceeded quota: <name>,
   * requested: ..., used: ..., limited: ...`), reason `QuotaExceeded`, the control plane's hop (lib/claim-hold.ts).
   */
  readonly volumes?: {
    /** Each volume one instance gets, in the order the backend makes them: paths in the composed resource. */
    readonly each: readonly {
      /** Its size (`spec.storage.size`); a volume whose size is absent is not made. */
      readonly size: string;
      /** Its storage class, for a quota per class (`spec.storage.storageClass`); absent: the default class. */
      readonly storageClass?: string;
    }[];
    /** Path in the observed composed resource of how many volumes it has (`...status.pvcCount`). */
    readonly madeAt: string;
    /**
     * Path in the composed resource of how many instances get `each` (`spec.instances`): a replica's volume is
     * refused as the primary's is. Absent, or not a whole number: one.
     */
    readonly instances?: string;
    /**
     * Count the volumes made also as the namespace's PersistentVolumeClaims that carry the diagnostics' `labels`
     * (CloudNativePG labels each of a Cluster's `cnpg.io/cluster`), the larger count winning: the backend writes its
     * own count (`madeAt`) on a later reconcile than the one that made a volume, and meanwhile the quota's use counts
     * it, so the volume just made would be named as refused. Crossplane core must be allowed to read them (synth's
     * aggregated ClusterRole says so).
     */
    readonly labelled?: boolean;
  };
}

/**
 * Objects the backend runs one at a time with the resource, the oldest waiting one first (CloudNativePG's backups of
 * one Cluster: CanExecuteBackup). While the resource is observed, neither running nor done and not failing, the
 * function asks Crossplane for them (of `apiVersion`/`kind` with `labels` in the composite's namespace, every object
 * checked again for both) and, where one of them runs or an older one waits, names it after the backend's progress:
 * `waits for <kind> <name>, running since <startedAt>: <says>`, reason `Queued`. Crossplane core must be allowed to
 * read the kind (synth's aggregated ClusterRole says so).
 */
export interface Queue {
  readonly apiVersion: string;
  readonly kind: string;
  /** The labels every object of the queue carries (the resource's own too), from the composite's trusted view. */
  readonly labels: readonly LabelMapping[];
  /** Path of the resource as observed in its composed resource (`status.atProvider.manifest`): its name, age, phase. */
  readonly observedAt: string;
  /** Path of an object's phase; the phases in which one runs, and those in which it is done (any other: it waits). */
  readonly phaseAt: string;
  readonly running: readonly string[];
  readonly done: readonly string[];
  /** Path of when one started running, said where it is set. */
  readonly startedAt?: string;
  /** Why they run one at a time, said after the name (`CloudNativePG takes one backup of an instance at a time`). */
  readonly says: string;
}

/**
 * A resource composed beside the recipe's own, from the same composite: what the backend needs besides its main
 * object and does not make itself (CloudNativePG makes no NetworkPolicy for a Cluster). It has fields and labels, no
 * status, connection details or parameters: the claim reads those from the main resource. It is ready when its
 * composed resource is, and the claim is Ready only when every companion is.
 */
export interface Companion {
  /** Its name among the composite's resources, after the main one's (`cnpg-postgresql-network-policy`). */
  readonly name: string;
  readonly resource: { readonly apiVersion: string; readonly kind: string };
  readonly wrapper?: Wrapper;
  readonly providerConfig: ProviderConfigSelector;
  readonly fields: readonly FieldMapping[];
  readonly labels?: readonly LabelMapping[];
  /**
   * Values generated once and kept, as the recipe's own (a password the backend reads from a companion Secret); not
   * read from a live object: a companion the v2 composite takes over from a v1 one gets a new value.
   */
  readonly generated?: readonly Pick<GeneratedValue, 'to'>[];
  /**
   * Composed only from the first run whose main resource (as that run composes it, wrapped object and related list
   * included) holds, in the list at `at`, an item with every value of `has`; kept from then on while Crossplane
   * observes it, so a change of the list never deletes it. Without it the companion is always composed. The cnpg
   * session reaper: its Pod exists from the first revoked binding role on, not beside every new instance.
   */
  readonly when?: CompanionWhen;
}

/** The condition of a companion's composition (Companion.when). */
export interface CompanionWhen {
  /**
   * A list of the main resource, relative to the object the recipe's fields write (`spec.managed.roles`); with
   * `observed`, a path in the composed resource as Crossplane observed it, wrapper included
   * (`status.atProvider.manifest.status.conditions`).
   */
  readonly at: string;
  /** The values one of its items must have (`{ login: false }`). */
  readonly has: Readonly<Record<string, string | number | boolean>>;
  /**
   * Wait for the backend to report a state of the main resource, not for this run's composition of it: the cnpg
   * ScheduledBackup waits for the Cluster's `ContinuousArchiving` True. Such a companion comes after the instance is
   * up, so its own readiness does not hold the claim's: only its failure shows there. @default false
   */
  readonly observed?: boolean;
}

/**
 * An object the backend keeps outside the composed resource that reports an error about it at a field named after
 * it: CloudNativePG lists the roles it cannot reconcile in the instance's Cluster,
 * `status.managedRolesStatus.cannotReconcile[<role>]`, not on the binding. Once the composed resource is observed the
 * function asks Crossplane, on every run, for the objects of `apiVersion`/`kind` carrying `labels` in the composite's
 * namespace (v2: its own; v1: the claim's, from the label Crossplane wrote), keeps only those of that namespace whose
 * labels match (as for `diagnostics`), and reads each at `at`. A non-empty value there (a string, or a list of them,
 * as CNPG writes) is a failure: the resource is not Ready, DataServiceReady is False with `reason` and the message
 * `<kind> <name> <says>: <the value>`; once the value is gone the resource says what it said before. Crossplane core
 * must be allowed to read the kind (synth's aggregated ClusterRole says so). `at` and `says` are formats: `%s` is the
 * value of the composite's field `from` (its trusted view).
 */
/** Advice for failures whose message `match` (a case-insensitive regular expression, RE2 and JavaScript alike) finds. */
export interface ErrorAdvice {
  /** A regular expression (case-insensitive) the message is searched with. */
  readonly match: string;
  readonly advice: string;
  /**
   * The condition's reason where the rule finds a composed resource's own failure (its Synced False, the API server
   * refusing what it applies), in place of the provider's `ReconcileError`: a cause the claim's reader can tell apart
   * (lib/claim-hold.ts names the hop by it).
   */
  readonly reason?: string;
}

export interface ErrorsFrom {
  readonly apiVersion: string;
  readonly kind: string;
  /** The labels the object carries, from the composite's trusted view (the instance's label = `spec.instanceRef`). */
  readonly labels: readonly LabelMapping[];
  /** The composite field `%s` stands for in `at` and `says` (the claim's name). */
  readonly from: string;
  /** The field path of the error in the object (`status.managedRolesStatus.cannotReconcile[binding-%s]`). */
  readonly at: string;
  /** How the error is introduced after the object's kind and name (`cannot reconcile role binding-%s`). */
  readonly says: string;
  /** DataServiceReady's reason while the error is there (`RoleNotReconciled`). */
  readonly reason: string;
  /**
   * Where the object lists what the backend has yet to act on, when it does: while the list at `at` names `item`, the
   * resource is not Ready and DataServiceReady is False, reason `Provisioning`, `<kind> <name> <says>`. CNPG changes one
   * thing of a role per pass and lists it in `byStatus[pending-reconciliation]` until the last (its memberships come
   * after its password), so creds that log in are not yet creds that reach the app's tables. Formats, as above.
   */
  readonly pending?: { readonly at: string; readonly item: string; readonly says: string };
  /**
   * What the resource's own failure means while Crossplane finds no such object at all: DataServiceReady False with
   * `reason` and `says`, `%s` standing for the first label's value. A binding whose instance has no Cluster cannot
   * read the instance's Secret; the cause is the name in `spec.instanceRef`, not the backend (`ReferenceNotFound`).
   */
  readonly absent?: { readonly reason: string; readonly says: string };
}

/**
 * An object the resource must not be composed before: the backend would act on it too early. CloudNativePG starts a
 * backup of a Cluster whose WAL archiving does not work yet by waiting for it, up to ten minutes, in its only backup
 * worker, so every other tenant's backups wait as long: a `Backup` claim's CNPG Backup waits for its instance's Cluster
 * to report `ContinuousArchiving` True. Until the composed resource is first observed the function asks Crossplane for
 * objects of `apiVersion`/`kind` with `labels` in the composite's namespace (as `errorsFrom`), composes nothing while
 * none of them has condition `condition` True, and says so on the claim (`Provisioning`, with the object's own
 * condition message when it has one, and `advice` on a False one); from then on it no longer asks, so a later change
 * never removes the resource.
 */
export interface WaitsFor {
  readonly apiVersion: string;
  readonly kind: string;
  /** The labels the object carries, from the composite's trusted view (the instance's label = `spec.instanceRef`). */
  readonly labels: readonly LabelMapping[];
  /** The condition type that must be True (`ContinuousArchiving`). */
  readonly condition: string;
  /** What it waits for, after `waiting for <kind> <name> to` (`archive its WAL`). */
  readonly says: string;
  /**
   * What to do when the condition is False, by its message (the first rule that finds it, as `errorAdvice`; its
   * `reason` replaces `Provisioning`): the object the resource waits for says it will not come by waiting alone.
   */
  readonly advice?: readonly ErrorAdvice[];
}

/**
 * A value another object of the composite's namespace holds, written into the resource (formatted): what exists only
 * once something else made it, such as the address a load balancer gave an instance's Service, which a binding's
 * `uri` names. The function asks Crossplane for objects of `apiVersion`/`kind` with `labels` in the composite's
 * namespace (as `errorsFrom`) on every run; the first by name with a scalar at `from` fills `format`'s `%s` at `to`.
 * Nothing is written until one has it.
 */
export interface ValueFrom {
  readonly apiVersion: string;
  readonly kind: string;
  /** The labels the object carries, from the composite's trusted view (the instance's label = `spec.instanceRef`). */
  readonly labels: readonly LabelMapping[];
  /** The field of the object found (`status.loadBalancer.ingress[0].ip`). */
  readonly from: string;
  /** Where the value goes in the resource (in the wrapped object, if there is one). */
  readonly to: string;
  /** The value written, `%s` standing for what was found (`postgresql://%s:5432/app`). */
  readonly format: string;
  /**
   * Written base64-encoded, for a Secret's `data`. A value that changes must go there, not to `stringData`:
   * provider-kubernetes applies by server-side apply and compares the fields it owns, and a Secret keeps no
   * `stringData`, so a changed value there is never applied (a restored instance's new address, stop 66).
   */
  readonly base64?: boolean;
}

/**
 * A condition the backend reports on the composed resource that the claim shows as one of its own, beside
 * DataServiceReady: something the resource does besides serving, whose failure must not go unseen while it serves.
 * CloudNativePG's `ContinuousArchiving`: an instance whose WAL cannot be archived — its object store down or refusing
 * its keys, or an archive left under its name by a deleted instance of the same name — serves on with no backups.
 * The claim's condition has the backend's type, status and reason; a False one's message is the backend's, with the
 * first of `advice` that finds it. None until the backend reports it.
 */
export interface ShownCondition {
  /** The conditions in the observed composed resource, wrapper included (`status.atProvider.manifest.status.conditions`). */
  readonly at: string;
  /** The backend's condition type (`ContinuousArchiving`), which the claim's condition has too. */
  readonly type: string;
  /** What to do about a False one, by what its message says (the recipe's `errorAdvice` is about the resource itself). */
  readonly advice?: readonly ErrorAdvice[];
}

/** Everything the function needs to compose one resource of one backend for one API. */
export interface Recipe {
  /** apiVersion and kind of the resource: the managed resource itself, or (with `wrapper`) the wrapped object. */
  readonly resource: { readonly apiVersion: string; readonly kind: string };
  readonly wrapper?: Wrapper;
  readonly providerConfig: ProviderConfigSelector;
  /** Fields set on the resource. */
  readonly fields: readonly FieldMapping[];
  /** Where parameters go in the resource (`spec.forProvider.parameters`, `spec`). */
  readonly parametersTo?: string;
  readonly parameters?: readonly ParameterMapping[];
  /** Parameters the XRD accepts that this backend does not offer: reported as a warning, never silently dropped. */
  readonly ignoredParameters?: readonly string[];
  readonly planTable?: PlanTable;
  /** Labels set on the composed resource from composite fields (`klutch.io/instance-type`). */
  readonly labels?: readonly LabelMapping[];
  readonly connectionSecret?: ConnectionSecret;
  readonly status?: readonly StatusMapping[];
  /**
   * Where the backend reports its provisioning state in the observed composed resource; a value starting with
   * "fail" (`failed`, `Failed`, `failure`) fails the composite with the backend's message.
   */
  readonly failedStatePaths?: readonly string[];
  /**
   * Values at `failedStatePaths` that mean failure although they do not start with "fail": a backend whose state is
   * a phase sentence (CloudNativePG's "Unable to create required cluster objects").
   */
  readonly failedStates?: readonly string[];
  /**
   * Where the backend says what it is doing (its phase, the phase's reason). While the resource is neither ready
   * nor failing, the composite and the claim get the DataServiceReady condition False, reason `Provisioning`, with
   * these values as its message; a failure found at `failedStatePaths` carries them too. Without it nothing is
   * reported while the backend progresses.
   */
  readonly progressPaths?: readonly string[];
  /**
   * Where the backend reports an error in the observed composed resource; a non-empty string there fails the
   * composite with it as the message (the a8s operators' `status.error`).
   */
  readonly errorPaths?: readonly string[];
  /**
   * What the app developer (or whom they ask) can do about a failure, by what the backend's message says: the first
   * rule whose `match` finds the message adds its `advice` to the claim's condition. The backend's words stay first.
   */
  readonly errorAdvice?: readonly ErrorAdvice[];
  /** An object outside the composed resource where the backend reports an error about it (ErrorsFrom). */
  readonly errorsFrom?: ErrorsFrom;
  /** An object the resource waits for before it is composed (WaitsFor). */
  readonly waitsFor?: WaitsFor;
  /**
   * A composite field holding the time the resource's credentials expire (RFC 3339; `spec.expiresAt`): from then on
   * the resource is no longer composed (Crossplane deletes it, and its connection Secret with it), the claim says
   * `DataServiceReady False Expired` and when, and a later time composes it again, with new credentials.
   */
  readonly expiresAt?: string;
  /** A value of another object written into the resource once that object has it (ValueFrom). */
  readonly valueFrom?: ValueFrom;
  /** Conditions of the backend's that the claim shows beside DataServiceReady (ShownCondition). */
  readonly shownConditions?: readonly ShownCondition[];
  /** Values generated once and kept (GeneratedValue). */
  readonly generated?: readonly GeneratedValue[];
  /** A list with one item per related composite (RelatedList). */
  readonly related?: RelatedList;
  /** Composites that restore the resource by making it anew from a backup (RestoredBy). */
  readonly restoredBy?: RestoredBy;
  /** Credentials that rotate with an overlap, in two slots (Rotation). */
  readonly rotation?: Rotation;
  /** Objects whose conditions say why the resource waits (Diagnostics). */
  readonly diagnostics?: Diagnostics;
  /** Objects the backend runs one at a time with the resource, named while it waits its turn (Queue). */
  readonly queue?: Queue;
  /** Further resources composed beside this one for the same claim (an instance's NetworkPolicy). */
  readonly companions?: readonly Companion[];
  /**
   * The recipe on the `v2` target (Crossplane v2's namespaced composites, which may compose only namespaced
   * resources): the parts set here replace the recipe's own there, e.g. a namespaced wrapper and its ProviderConfig
   * kind. Without it the recipe is the same on both targets.
   */
  readonly v2?: Partial<Omit<Recipe, 'v2'>>;
}

/** Sets one label of the composed resource from a composite field. */
export interface LabelMapping {
  readonly key: string;
  readonly from: string;
  readonly transforms?: readonly Transform[];
}
