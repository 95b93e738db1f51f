/**
 * The one table of deliberate differences between klutch-kit and Klutch v1.5.0 (schemas/klutch-crossplane-api/),
 * each with its reason. The parity tests check it both ways: a difference that is not listed fails, and so does a
 * listed one that no longer exists.
 *
 * - `schema`: a facet of one path of the claim schema (test/parity/schema.test.ts);
 * - `xrd`: a field of the XRD other than the schema (same test);
 * - `verdict`: a claim case (test/cases/) that Klutch's XRD judges otherwise than ours (test/cluster/claims.test.ts);
 * - `mapping`: a path of the composed resource that Klutch's Composition sets otherwise, or not at all
 *   (test/parity/mapping.test.ts), with the evidence for ours.
 *
 * The rule for a delta: ours may refuse a claim that Klutch accepts only where Klutch's backend would certainly fail
 * it later; such deltas carry `refuses` (why the backend would fail), and the README's compatibility section lists
 * each of them. Being tidier is never a reason.
 */

export interface SchemaDelta {
  readonly kind: 'schema';
  readonly apis: readonly string[];
  /** Path in the claim schema (`spec.parameters.groks[]`). */
  readonly path: string;
  /** `present`, or a facet of test/parity/klutch.ts `Facets`. */
  readonly facet: string;
  readonly klutch: unknown;
  readonly ours: unknown;
  readonly why: string;
  /** Set when ours refuses claims Klutch accepts: why Klutch's backend would certainly fail them. */
  readonly refuses?: string;
}

export interface XrdDelta {
  readonly kind: 'xrd';
  readonly apis: readonly string[];
  readonly field: string;
  readonly klutch: unknown;
  readonly ours: unknown;
  readonly why: string;
}

export interface VerdictDelta {
  readonly kind: 'verdict';
  readonly api: string;
  /** The case's name in test/cases/<api>.cases.ts, `create <name>` or `update <name>`. */
  readonly case: string;
  readonly klutch: 'accepts' | 'rejects';
  readonly why: string;
  /** Set when ours refuses a claim Klutch accepts: why Klutch's backend would certainly fail it. */
  readonly refuses?: string;
}

export interface MappingDelta {
  readonly kind: 'mapping';
  /** Klutch's composition name (`a8s-backup`). */
  readonly compositions: readonly string[];
  /** Path in the composed resource; covers everything below it. */
  readonly path: string;
  /** What Klutch sets there (undefined: nothing), and what ours sets, for the claims of test/cases/. */
  readonly klutch: unknown;
  readonly ours: unknown;
  readonly why: string;
  /** Where the fact that decides it is written. */
  readonly evidence: string;
}

export type Delta = SchemaDelta | XrdDelta | VerdictDelta | MappingDelta;

/**
 * Where Klutch's Crossplane v2 branch (schemas/klutch-crossplane-api-v2/) judges a case in its own shape otherwise than
 * v1.5.0 judges it, because its XRDs changed (test/cluster/claims.test.ts checks these both ways too). Ours keeps
 * v1.5.0's verdict, so that claims written for Klutch 1.x stay valid on the v2 package.
 */
export const V2_BRANCH_VERDICTS: readonly VerdictDelta[] = [
  ...['create region and policy', 'create us-east-1'].map((c): VerdictDelta => ({
    kind: 'verdict',
    api: 'servicebinding',
    case: c,
    klutch: 'rejects',
    why: "the v2 branch's ServiceBinding has no spec.region and spec.policy (a9s's, which v1.5.0 has): a claim with them is an unknown field there",
  })),
];

/** A value that differs per claim; the mapping test then only checks presence on each side. */
export const ANY = '<any value>';

export const DELTAS: readonly Delta[] = [
  // ---- schema: how a claim is validated -----------------------------------------------------------------------------
  {
    kind: 'schema',
    apis: ['postgresql'],
    path: 'spec.service',
    facet: 'enum',
    klutch: undefined,
    ours: ANY,
    why:
      'Klutch lists the PostgreSQL service versions only in a CEL rule per composition; ours are an enum of all of them plus ' +
      'a rule per composition, so the same claims are accepted (checked on the API server) and a typo gets the list of values',
  },
  {
    kind: 'schema',
    apis: ['postgresql'],
    path: 'spec.plan',
    facet: 'enum',
    klutch: undefined,
    ours: ANY,
    why: 'as spec.service: Klutch lists the plans in a CEL rule per composition, ours in an enum plus a rule per composition',
  },
  {
    kind: 'schema',
    apis: ['postgresql', 'mariadb', 'messaging', 'mongodb', 'prometheus', 'search', 'logme2', 'keyvalue'],
    path: 'spec.deletionProtection',
    facet: 'present',
    klutch: false,
    ours: true,
    why:
      'an optional boolean Klutch has not: while true, the admission policy of the konnector access file refuses the ' +
      "instance's deletion in the app cluster (docs/backups.md); no composition reads it, and claims without it are unchanged",
  },
  ...['spec.restoreFrom', 'spec.restoreFrom.instance', 'spec.restoreFrom.pointInTime'].map((path) => ({
    kind: 'schema' as const,
    apis: ['postgresql'],
    path,
    facet: 'present' as const,
    klutch: false,
    ours: true,
    why:
      "optional, and only where a cnpg offering has backups (the example catalog names the sandbox's object store): a " +
      "new instance recovered from another's backups to a point in time (docs/backups.md); claims without it are unchanged",
  })),
  {
    kind: 'schema',
    apis: ['servicebinding'],
    path: 'spec.expiresAt',
    facet: 'present',
    klutch: false,
    ours: true,
    why:
      'an optional RFC 3339 time Klutch has not, cnpg only (a CEL rule): then the binding is revoked and its creds removed ' +
      '(docs/credentials.md); claims without it are unchanged',
  },
  ...['spec.rotation', 'spec.rotation.requested', 'spec.rotation.every', 'spec.rotation.overlap'].map((path) => ({
    kind: 'schema' as const,
    apis: ['servicebinding'],
    path,
    facet: 'present' as const,
    klutch: false,
    ours: true,
    why:
      'an optional rotation of the password Klutch has not, cnpg only (a CEL rule): on request or on a schedule, with an ' +
      'overlap (docs/credentials.md); claims without it are unchanged',
  })),
  // ---- verdict: claims judged otherwise -----------------------------------------------------------------------------
  {
    kind: 'verdict',
    api: 'postgresql',
    case: '<any claim without compositionRef>',
    klutch: 'rejects',
    why:
      "Klutch's CEL rules read self.compositionRef.name unguarded, so every PostgreSQL claim that relies on " +
      'defaultCompositionRef fails with "no such key: compositionRef"; ours guard it with has() and judge the claim as ' +
      "its default composition. (Klutch's ServiceBinding, Backup and Restore rules survive the missing key when their " +
      'other side is true, e.g. serviceInstanceType: postgresql, so they agree with ours.)',
  },
  // ---- mapping: what the composed resources hold --------------------------------------------------------------------
  {
    kind: 'mapping',
    compositions: ['a8s-postgresql', 'a8s-servicebinding', 'a8s-backup', 'a8s-restore'],
    path: 'apiVersion',
    klutch: 'kubernetes.crossplane.io/v1alpha1',
    ours: 'kubernetes.crossplane.io/v1alpha2',
    why: "provider-kubernetes' storage version of Object; both versions carry the same forProvider.manifest and providerConfigRef",
    evidence: 'schemas/provider-kubernetes/kubernetes.crossplane.io_objects.yaml (v1alpha2 is the storage version)',
  },
  {
    kind: 'mapping',
    compositions: ['a8s-postgresql', 'a8s-servicebinding', 'a8s-backup', 'a8s-restore'],
    path: 'spec.readiness',
    klutch: undefined,
    ours: ANY,
    why:
      "Klutch's Objects keep provider-kubernetes' default readiness, SuccessfulCreate, so a claim is Ready the moment its a8s " +
      'object exists, before the operator has a cluster, user or backup; ours derive it from what the operator reports ' +
      '(PostgreSQL clusterStatus Running, ServiceBinding implemented, Backup and Restore their own Ready condition)',
    evidence:
      'backends/a8s.ts A8S_POSTGRESQL_READY, A8S_BINDING_READY, A8sReadiness.fromObject; test/cluster/crossplane-claims.test.ts "an a8s claim is ' +
      'not Ready until the PostgreSQL operator reports the cluster running" (on the real Crossplane loop)',
  },
  {
    kind: 'mapping',
    compositions: ['a8s-postgresql', 'a8s-servicebinding', 'a8s-backup', 'a8s-restore'],
    path: 'spec.watch',
    klutch: undefined,
    ours: true,
    why:
      "ours asks provider-kubernetes to watch the wrapped a8s object, so the operator's status reaches the claim within a " +
      "second instead of on the provider's 30 s poll of a not-Ready Object; Klutch's Objects are polled",
    evidence:
      'synth/provider-configs.ts (--enable-watches in the DeploymentRuntimeConfig); bench/crossplane readiness lag row ' +
      '(docs/decisions/crossplane-e2e.md)',
  },
  ...(['metadata.labels[crossplane.io/claim-name]', 'metadata.labels[crossplane.io/claim-namespace]'] as const).map(
    (path): MappingDelta => ({
      kind: 'mapping',
      compositions: ['a8s-postgresql', 'a8s-servicebinding', 'a8s-backup', 'a8s-restore'],
      path,
      klutch: undefined,
      ours: ANY,
      why: "ours labels the a8s Object with its claim as Klutch labels its a9s managed resources, so `kubectl get objects -l` finds a claim's Object",
      evidence: 'schemas/klutch-crossplane-api/a9s/*/composition.yaml copy the same labels onto every a9s resource',
    }),
  ),
  ...(['a8s-backup', 'a8s-restore'] as const).map((composition): MappingDelta => ({
    kind: 'mapping',
    compositions: [composition],
    path: 'spec.forProvider.manifest.spec.serviceInstance.kind',
    klutch: 'PostgreSQL',
    ours: 'Postgresql',
    why: "the a8s backup manager names the instance by its Kubernetes kind, which is Postgresql; Klutch's map writes PostgreSQL",
    evidence:
      'schemas/a8s/backups.backups.anynines.com.yaml and restores.backups.anynines.com.yaml: serviceInstance.kind "e.g. Postgresql"; ' +
      'schemas/a8s/postgresqls.postgresql.anynines.com.yaml: kind Postgresql',
  })),
  {
    kind: 'mapping',
    compositions: ['a8s-servicebinding'],
    path: 'spec.connectionDetails',
    klutch: undefined,
    ours: ANY,
    why:
      "ours publishes the a8s binding's Secret (database, instance_service, password, username) as <claim>-creds in the claim's " +
      'namespace, as the a9s binding does, so apps read credentials the same way on both backends; Klutch leaves them in the ' +
      'a8s Secret and reports its name in status.managed.secret (ours does too: the whole a8s status is copied)',
    evidence:
      'backends/a8s.ts A8S_BINDING_SECRET (the Secret the a8s service-binding controller writes); ' +
      'schemas/a8s/servicebindings.servicebindings.anynines.com.yaml (status.secret names it)',
  },
  ...(['spec.writeConnectionSecretToRef.name', 'spec.writeConnectionSecretToRef.namespace'] as const).map((path): MappingDelta => ({
    kind: 'mapping',
    compositions: ['a8s-servicebinding'],
    path,
    klutch: undefined,
    ours: ANY,
    why: 'where the a8s binding credentials are written: <claim>-creds in the claim namespace, as for a9s (see spec.connectionDetails)',
    evidence: 'schemas/klutch-crossplane-api/a9s/servicebinding/composition.yaml writes the same name for a9s',
  })),
  {
    kind: 'mapping',
    compositions: ['a9s-servicebinding'],
    path: 'spec.forProvider.acceptsIncomplete',
    klutch: true,
    ours: false,
    why:
      "Klutch's ServiceBinding XRD offers acceptsIncomplete but its a9s Composition never reads it (always true); ours passes " +
      "the claim's value on, default true, as every a9s instance Composition of Klutch does",
    evidence:
      'schemas/klutch-crossplane-api/common/servicebinding_definition.yaml (spec.acceptsIncomplete) and a9s/servicebinding/composition.yaml (no patch)',
  },
  // ---- xrd: the rest of the XRD --------------------------------------------------------------------------------------
  {
    kind: 'xrd',
    apis: ['servicebinding', 'backup', 'restore'],
    field: 'printerColumns',
    klutch: [],
    ours: ['ManagedResource string .status.managed.state'],
    why: "every claim shows its backend's state in `kubectl get`, as Klutch's other XRDs do; a column never changes what is accepted",
  },
  {
    kind: 'xrd',
    apis: ['postgresql'],
    field: 'printerColumns',
    klutch: [],
    ours: [
      'ManagedResource string .status.managed.state',
      'Archiving string .status.managed.conditions[?(@.type=="ContinuousArchiving")].status',
      'LastBackup string .status.managed.lastSuccessfulBackup',
      'RecoverableFrom string .status.managed.firstRecoverabilityPoint',
    ],
    why:
      "the backend's state, as every claim; and, where a cnpg offering has backups, whether WAL archiving works, the last backup and the start of the " +
      "recoverable window (CloudNativePG's, in status.managed); a column never changes what is accepted",
  },
];
