/**
 * The CloudNativePG backend: PostgreSQL on Kubernetes run by the open-source CloudNativePG operator
 * (postgresql.cnpg.io), composed as a8s is, through provider-kubernetes Objects (`kubernetesObject()`). Everything the backend means for a
 * recipe is here: the CNPG `Cluster` an instance becomes (plan → instances, storage and resources; parameters →
 * `spec.postgresql.parameters`, strings as CNPG wants them), when it is ready, where its status is read, and how a
 * binding's credentials are assembled into the keys of Klutch's a8s binding (docs/decisions/cloudnative-pg.md).
 *
 * The function learns nothing of this: a binding is an Object holding a Secret with a role of its own and a password
 * the function generates once (`Recipe.generated`), plus fields provider-kubernetes copies
 * (`spec.references[].patchesFrom`) from the instance's application Secret and external Service, so `<claim>-creds`
 * gets `database`, `instance_service`, `password`, `username` through the recipe vocabulary the a8s binding uses. The
 * instance's Cluster lists one managed role per binding (`Recipe.related`), and a gone binding's role as revoked.
 */
import { BlockList, isIP } from 'node:net';
import type { ErrorAdvice, FieldMapping, ParameterMapping, Recipe, RelatedList, Rotation, StatusMapping, Transform } from '../recipe';
import {
  archivingCondition,
  checkBackupStore,
  clusterBackupFields,
  clusterRecoveryFields,
  cnpgRestoredBy,
  RESTORE_FROM,
  scheduledBackup,
  type CnpgBackupStore,
} from './cnpg-backup';
import { kubernetesCompanion, kubernetesObject, OBJECT_STATUS } from './kubernetes-object';
import { CNPG_OPERATOR_ADVICE } from './cnpg-operator';

export const CNPG = 'cnpg';

/** CloudNativePG's Cluster, the object one PostgresqlInstance becomes. */
export const CNPG_CLUSTER = { apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster' } as const;

/** The claim's name and namespace as the function reads them (trustedComposite: a v2 composite's own). */
const CLAIM_NAME = 'metadata.labels[crossplane.io/claim-name]';
const CLAIM_NAMESPACE = 'metadata.labels[crossplane.io/claim-namespace]';

/**
 * CNPG reports `readyInstances` and the phase `Cluster in healthy state` once every instance runs and the primary
 * accepts connections (pkg/apis `PhaseHealthy`); `instances` is what was asked for, so a resize is not Ready until
 * the new instances are.
 */
export const CNPG_CLUSTER_READY = {
  policy: 'DeriveFromCelQuery',
  celQuery:
    "has(object.status) && has(object.status.phase) && object.status.phase == 'Cluster in healthy state' && " +
    'has(object.status.readyInstances) && object.status.readyInstances == object.spec.instances',
} as const;

/** The Cluster's observed status (phase, phaseReason, readyInstances, its conditions) and the Object's conditions. */
export const CNPG_STATUS: readonly StatusMapping[] = OBJECT_STATUS;

/** Where the Object shows the Cluster's phase and the phase's reason (`Setting up primary`, `Creating primary instance cluster-1`). */
export const CNPG_PHASE_PATHS = ['status.atProvider.manifest.status.phase', 'status.atProvider.manifest.status.phaseReason'] as const;

/**
 * The phases in which CNPG has given up until someone acts (pkg/apis v1 cluster_types.go): the claim fails with the
 * phase and its reason (the API server's refusal of an object CNPG needs, a missing plugin). Every other phase is
 * progress, reported as such. CNPG does not report what it does not see: a volume claim that stays Pending leaves
 * the phase at "Setting up primary"; the claim says why from its Pods (CNPG_POD_DIAGNOSTICS).
 */
export const CNPG_FAILED_PHASES = [
  'Unable to create required cluster objects',
  'Cluster is unrecoverable and needs manual intervention',
  'Cluster cannot proceed to reconciliation due to an unknown plugin being required',
  'Cluster cannot proceed to reconciliation due to an error while interacting with plugins',
  'Cluster has incomplete or invalid image catalog',
  'Cluster cannot execute instance online upgrade due to missing architecture binary',
  // 1.30: a definition its admission check refuses (SetAdmissionError), the reason in phaseReason.
  'Invalid cluster definition',
] as const;

/**
 * What CNPG does not report (docs/decisions/cnpg-lifecycle.md, item 5): a volume claim that cannot bind leaves the phase
 * at "Setting up primary" while its Pods (the initdb Job's, an instance's, a joining replica's; all labelled
 * `cnpg.io/cluster=<cluster>`) cannot be scheduled. The function reads their `PodScheduled=False` message ("0/1 nodes
 * are available: 1 node(s) didn't find available persistent volumes to bind") into the claim's condition.
 */
export const CNPG_POD_DIAGNOSTICS = {
  apiVersion: 'v1',
  kind: 'Pod',
  labels: [{ key: 'cnpg.io/cluster', from: CLAIM_NAME }],
  conditions: [{ type: 'PodScheduled', status: 'False', says: 'cannot be scheduled' }],
  // A Job's Pod that failed (initdb, a recovery): CNPG retries the Job for minutes before its phase says so.
  failed: { says: 'failed' },
  // A Pod that cannot start: an image the registry lacks (a mirror not filled), a Secret or ConfigMap not there, a
  // container that keeps crashing. Its Ready condition says only "containers with unready status".
  waiting: {
    says: 'cannot start',
    reasons: [
      'ErrImagePull',
      'ImagePullBackOff',
      'InvalidImageName',
      'CreateContainerConfigError',
      'CreateContainerError',
      'CrashLoopBackOff',
    ],
  },
  // A ResourceQuota of the namespace that refuses a volume of the instance, a replica's too (--claim-quota's
  // requests.storage or persistentvolumeclaims, or the operator's own): CNPG only logs the refusal.
  volumes: {
    each: [{ size: 'spec.storage.size', storageClass: 'spec.storage.storageClass' }],
    madeAt: 'status.atProvider.manifest.status.pvcCount',
    instances: 'spec.instances',
    labelled: true,
  },
} as const;

/**
 * What to do when an instance cannot be made, by CNPG's words or its failed Pod's name. A restore (`restoreFrom`) runs
 * as the Job `<instance>-1-full-recovery`, which fails when the point in time lies outside the source's recoverable
 * window or the source has no backups there (`barman-cloud-backup-list` finds no base backup before the target); CNPG
 * retries it for about ten minutes, then says "Instance creation failed for the following jobs: <name>".
 */
export const CNPG_INSTANCE_ADVICE: readonly ErrorAdvice[] = [
  CNPG_OPERATOR_ADVICE,
  {
    match: '-full-recovery',
    advice:
      "the restore from spec.restoreFrom failed: restoreFrom.pointInTime must lie between the end of the source instance's first completed backup and its last archived WAL (the source's claim shows its backups while it exists), and restoreFrom.instance must name an instance of this namespace whose offering keeps backups; delete this claim and create it again with a point inside that window, or without pointInTime for the newest state",
  },
];

/**
 * The label naming the instance (its claim's name) on its Cluster, which CNPG leaves without one: a binding finds its
 * instance's Cluster by it (CNPG_ROLE_ERRORS), since Crossplane v1.20 fetches an extra resource by name only
 * cluster-wide, not in a namespace.
 */
export const CNPG_INSTANCE_LABEL = 'klutch.anynines.com/instance';

/** The suffix of the LoadBalancer Service each instance gets beside CNPG's own `-rw`/`-ro`/`-r` (ClusterIP) ones. */
export const CNPG_EXTERNAL_SERVICE_SUFFIX = '-external';
/** The Secret CNPG writes for the owner of the application database (`<cluster>-app`; keys username, password, dbname, ...). */
export const CNPG_APP_SECRET_SUFFIX = '-app';
/** The Secret a binding's Object writes beside the claim, in the a8s keys, and publishes as `<claim>-creds`. */
export const CNPG_BINDING_SECRET_SUFFIX = '-cnpg-binding';
/**
 * The label that makes CNPG's operator watch a Secret it does not own (its `cnpg.io/reload`): on a role's password
 * Secret, its creation or change writes the Cluster's status, and that makes the instance manager apply the role
 * again. Without it, a role listed before its Secret existed (or before the operator let the instance read it) stayed
 * in `cannotReconcile` until something else changed the Cluster: a binding's creds then came minutes late or never.
 */
export const CNPG_RELOAD_LABEL = 'cnpg.io/reload';
/** The annotation of a binding's Secret with its instance's address (cnpgBinding: what makes a new one applied). */
export const CNPG_ADDRESS_ANNOTATION = 'klutch.anynines.com/instance-address';

/** The ServiceBinding field with the time its credentials expire (RFC 3339), a field Klutch's API has not. */
export const BINDING_EXPIRES_AT = 'spec.expiresAt';
/** The keys of Klutch's a8s binding, which `<claim>-creds` has. */
export const CNPG_BINDING_KEYS = ['database', 'instance_service', 'password', 'username'] as const;
/** The key of `<claim>-creds` beside Klutch's: the instance's server CA, so a client verifies what it connects to. */
export const CNPG_CA_KEY = 'ca.crt';
/**
 * The keys of the Service Binding for Kubernetes spec (servicebinding.io) beside Klutch's, so Spring Cloud Bindings,
 * Quarkus and the other frameworks that read a binding from `/bindings/<name>` take `<claim>-creds` as it is: `type`
 * and `provider` as the spec names them, `host` and `port` apart, and libpq's `sslmode` the CA allows (the server's
 * certificate names the Cluster's Services, not the load balancer's address, so verify-ca, not verify-full), and a
 * `uri` of libpq's form with all of that but the credentials (`postgresql://<host>:5432/app?sslmode=verify-ca`: the
 * spec lets a URI leave them out, and the password stays in one key, `password`, for rotation to change).
 */
export const CNPG_SERVICE_BINDING_KEYS = ['type', 'provider', 'host', 'port', 'sslmode', 'uri'] as const;
/** The Secret CNPG keeps the server CA in (`<cluster>-ca`: `ca.crt`, and its key, which is never copied). */
export const CNPG_CA_SECRET_SUFFIX = '-ca';
/** PostgreSQL's port, and the instance manager's status port, which the operator calls (CNPG's pkg/management/url). */
export const CNPG_POSTGRESQL_PORT = 5432;
export const CNPG_STATUS_PORT = 8000;
/** The composed NetworkPolicy's name among the composite's resources (after `cnpg-postgresql`). */
export const CNPG_NETWORK_POLICY = 'network-policy';

/**
 * The binding composites an instance lists a role for (the servicebinding API of apis/catalog, on each target's
 * composite kind: `XServiceBinding` with claims on v1, the namespaced `ServiceBinding` on v2), and the composition
 * they must name, so a binding of another backend that names the same instance gets no role here.
 */
export const CNPG_BINDING_COMPOSITE = {
  apiVersion: 'anynines.com/v1',
  kind: { v1: 'XServiceBinding', v2: 'ServiceBinding' },
  composition: `${CNPG}-servicebinding`,
} as const;
/**
 * A binding's role: `binding-<binding's claim name>`. Unique per binding of a claim (they share its namespace), the
 * same for the v1 composite and the v2 one that takes it over (so the move keeps the user), and never one of CNPG's
 * own (`postgres`, `streaming_replica`) or the application owner `app`. PostgreSQL keeps 63 bytes of a name, so a
 * binding's name may have 55 characters at most (docs/decisions/cnpg-lifecycle.md).
 */
export const CNPG_ROLE_FORMAT = 'binding-%s';
/**
 * The user of a binding's second slot, whose credentials rotate (docs/decisions/cnpg-rotation.md): as long as
 * CNPG_ROLE_FORMAT's, so the same names fit, and never one of its names, since a claim's name has no `_`.
 */
export const CNPG_ROTATED_ROLE_FORMAT = 'binding_%s';
/** The Secret of the second slot's user (`<claim>-cnpg-binding-2`), its companion's name among the resources. */
export const CNPG_ROTATED_SECRET_SUFFIX = '-cnpg-binding-2';
export const CNPG_ROTATED_SECRET = 'rotated-secret';
/** The annotation of a slot's Secret with the generation of its password (Rotation.annotation). */
export const CNPG_ROTATION_ANNOTATION = 'klutch.anynines.com/rotation-generation';
/** Where a binding keeps its rotation (rotation.ts RotationState), beside what its Object reports. */
export const CNPG_ROTATION_STATUS = 'status.managed.rotation';
/** The ServiceBinding's fields: a new `requested` asks for a rotation, `every` schedules them, `overlap` (default 5m). */
export const BINDING_ROTATION = 'spec.rotation';
export const CNPG_ROTATION_OVERLAP = '5m';
/** Where a konnector's receipt for the creds it copied lands on a binding: exports/bind-api's Annotations.credentialsReceived. */
export const CREDENTIALS_RECEIVED = 'klutch.anynines.com/credentials-received';

/**
 * A binding role's comment, the same whether it can log in or is revoked: CNPG changes one thing of a role per pass
 * (its options and password, then its comment, then its memberships) and a comment pass writes no status that would
 * start the next. A comment that changed with the state left a renewed role out of the login group until something
 * else changed the Cluster (228 s in w86), and a revoked one in the owner's group.
 */
export const CNPG_ROLE_COMMENT = 'klutch-kit: the role of a ServiceBinding (binding-<its name>); NOLOGIN once revoked';
/**
 * A longer role name fails the binding's claim, saying so, and stays out of the instance's role list: PostgreSQL
 * would create the role under a shortened name, and CNPG's role sync would then stop at it for every role of the
 * instance, revocations included.
 */
const ROLE_NAME_LIMIT = {
  bytes: 63,
  fix: 'PostgreSQL keeps 63 bytes of a role name (binding-<name>); give the ServiceBinding a name of 55 characters at most',
};
/** The application database and its owner, of which every binding's role is a member (its tables, its schema). */
export const CNPG_APP_OWNER = 'app';

/**
 * The platform's sessions are not the app's: the claim's `statementTimeout` and `idleInTransactionSessionTimeout` are
 * server-wide settings, and Barman's `pg_backup_stop`, which waits for the last WAL segment to be archived, outlasts
 * a short one, so every base backup failed ("canceling statement due to statement timeout"). The superuser CNPG and
 * Barman log in as is exempt, set once by `initdb` (a restored instance has its source's).
 */
export const CNPG_SUPERUSER_SETTINGS = [
  'ALTER ROLE postgres SET statement_timeout = 0',
  'ALTER ROLE postgres SET idle_in_transaction_session_timeout = 0',
] as const;

/**
 * What a binding's role creates in the application database belongs to the owner `app`, of which every binding's role
 * is a member: otherwise a table the app made through one binding is out of reach of every other binding, and of the
 * bindings of an instance restored from this one (whose restored rows it then cannot read), and outlives its maker's
 * revocation as an object nobody who can log in may use. An event trigger, made by `initdb` as the superuser in the
 * application database, gives each object a command creates to `app` when the session's user is a member of `app`
 * and no superuser (CNPG, Barman and the session reaper are not members). A sequence a table owns follows its table.
 * Instances made before it keep what their bindings made (docs/backups.md: `SET ROLE app`).
 */
export const CNPG_OWNER_TRIGGER_SQL = [
  `CREATE FUNCTION klutch_owned_by_app() RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $fn$
DECLARE o record;
BEGIN
  IF NOT pg_has_role(session_user, '${CNPG_APP_OWNER}', 'MEMBER') OR (SELECT rolsuper FROM pg_roles WHERE rolname = session_user) THEN RETURN; END IF;
  FOR o IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
    CONTINUE WHEN o.in_extension OR o.object_type NOT IN ('table', 'view', 'materialized view', 'sequence', 'schema', 'function', 'procedure', 'type', 'domain');
    CONTINUE WHEN o.object_type = 'sequence' AND EXISTS (SELECT 1 FROM pg_depend WHERE classid = 'pg_class'::regclass AND objid = o.objid AND deptype IN ('a', 'i'));
    EXECUTE format('ALTER %s %s OWNER TO ${CNPG_APP_OWNER}', upper(o.object_type), o.object_identity);
  END LOOP;
END $fn$`,
  "CREATE EVENT TRIGGER klutch_owned_by_app ON ddl_command_end WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'CREATE VIEW', 'CREATE MATERIALIZED VIEW', 'CREATE SEQUENCE', 'CREATE SCHEMA', 'CREATE FUNCTION', 'CREATE PROCEDURE', 'CREATE TYPE', 'CREATE DOMAIN') EXECUTE FUNCTION klutch_owned_by_app()",
] as const;

/**
 * What ends the sessions of a revoked binding role (docs/decisions/cnpg-lifecycle.md): PostgreSQL keeps a session
 * open after its role loses LOGIN and its password, and CNPG's role reconciler ends none. Each instance has a role of
 * the platform's own, a member of `pg_signal_backend` (it may end the sessions of any role but a superuser, nothing
 * more), whose password the function generates into `<claim>-session-reaper`, and, from the instance's first revoked
 * binding role on, a Deployment beside the Cluster that every CNPG_REAPER_INTERVAL_S seconds connects over TLS
 * (verify-full against the instance's CA) and ends the sessions of every `binding-*` role that may not log in. The name is not of CNPG_ROLE_FORMAT, so no binding can take it.
 */
export const CNPG_REAPER_ROLE = 'klutch-session-reaper';
/**
 * Who may log in over the network: with TLS only, and only the platform's session reaper and the members of the
 * instance's login group. CNPG puts user rules after its own (local peer, the replicas' certificates) and before its
 * default `host all all all scram-sha-256`, which no remote connection reaches any more. `%s` is the login group.
 */
export const CNPG_PG_HBA = [
  'hostnossl all all all reject',
  `hostssl all ${CNPG_REAPER_ROLE} all scram-sha-256`,
  'hostssl all +%s all scram-sha-256',
  'hostssl all all all reject',
] as const;
/**
 * The login group of an instance, `klutch-login-<claim>` (CNPG refuses a Cluster name over 50 characters: 63 bytes
 * at most, PostgreSQL's limit), of which the roles of the instance's own bindings are members. A restored instance
 * has its source's roles with their passwords, as of the restore point — those of bindings deleted since included —
 * but as members of the source's group, which pg_hba does not let in: the source's credentials never open the
 * restored instance, whatever the platform knows of them. The claim's name, not the composite's uid, so the group
 * stays when the package moves from v1 to v2 composites.
 */
export const CNPG_LOGIN_GROUP_FORMAT = 'klutch-login-%s';
/** The Secret of its password (`<claim>-session-reaper`, basic-auth keys username and password, as CNPG reads them). */
export const CNPG_REAPER_SECRET_SUFFIX = '-session-reaper';
/** Seconds between two passes: a revoked role's sessions end within this of CNPG applying NOLOGIN. */
export const CNPG_REAPER_INTERVAL_S = 10;
/** The companions' names among the composite's resources (after `cnpg-postgresql`). */
export const CNPG_REAPER = 'session-reaper';
export const CNPG_REAPER_SECRET = 'session-reaper-secret';
/** The label of the reaper's Pods, which the instance's NetworkPolicy admits to PostgreSQL's port. */
export const CNPG_REAPER_LABEL = 'klutch.anynines.com/session-reaper';
/**
 * One pass: end each session of a revoked binding role, and say which. The sessions are chosen first (a materialized
 * CTE): a filter beside `pg_terminate_backend` in one WHERE clause may be evaluated after it, and PostgreSQL refuses
 * the whole statement once it is asked to end a superuser's session. `^binding[-_]` is the prefix of CNPG_ROLE_FORMAT and CNPG_ROTATED_ROLE_FORMAT.
 */
export const CNPG_REAPER_SQL =
  'WITH revoked AS MATERIALIZED (SELECT a.pid, r.rolname FROM pg_stat_activity a JOIN pg_roles r ON r.oid = a.usesysid ' +
  "WHERE r.rolname ~ '^binding[-_]' AND NOT r.rolcanlogin AND NOT r.rolsuper) " +
  "SELECT format('ended session %s of revoked role %s', pid, rolname) FROM revoked WHERE pg_terminate_backend(pid)";

/** Resources and storage per plan size. */
export interface CnpgSize {
  readonly storage: string;
  readonly cpu: string;
  readonly memory: string;
}

export interface CnpgPlan {
  readonly name: string;
  readonly topology: string;
  readonly size: string;
}

/** What a CloudNativePG offering of PostgreSQL adds to the services and plans every backend has. */
export interface BackendCnpgOffering {
  readonly services: readonly string[];
  readonly plans: readonly CnpgPlan[];
  /** The PostgreSQL image per service version (`a9s-postgresql15` → an image with PostgreSQL 15 for CNPG). */
  readonly images: Readonly<Record<string, string>>;
  /** Storage and resources per size; every size of the plans needs an entry. */
  readonly sizes: Readonly<Record<string, CnpgSize>>;
  /** PostgreSQL instances per topology (1 primary + standbys); every topology of the plans needs an entry. */
  readonly instances: Readonly<Partial<Record<string, number>>>;
  /** @default kubernetes-provider */
  readonly providerConfigName?: string;
  /** The Service type of the instance's external address (how app clusters reach it). @default LoadBalancer */
  readonly serviceType?: 'LoadBalancer' | 'NodePort';
  /**
   * The addresses (CIDRs) app clusters connect from. A LoadBalancer admits only these (`loadBalancerSourceRanges`),
   * and each instance's NetworkPolicy admits PostgreSQL's port only from them. Required: an instance is never open to
   * any address by default.
   */
  readonly sourceRanges: readonly string[];
  /** Annotations of the external Service, e.g. a cloud's internal load balancer (`networking.gke.io/load-balancer-type: Internal`). */
  readonly serviceAnnotations?: Readonly<Record<string, string>>;
  /** The namespace of the CloudNativePG operator, whose Pods call each instance's status port. @default cnpg-system */
  readonly operatorNamespace?: string;
  /**
   * The control plane's own Pod (and node) networks, left out of every source range (`ipBlock.except`): CNIs that
   * match `ipBlock` against Pod addresses too (Calico does) would otherwise admit every Pod of the control plane —
   * another tenant's database, a root namespace's konnector — whose address falls in a range such as 10.0.0.0/8.
   * Each must lie inside a source range or outside all of them. @default none
   */
  readonly clusterNetworks?: readonly string[];
  /**
   * The object store every instance archives its WAL to and keeps its base backups in, a bucket per tenant
   * namespace (backends/cnpg-backup.ts). Unset: no instance is backed up, and a `Backup` claim fails saying so.
   */
  readonly backups?: CnpgBackupStore;
}

/** The address family, network and prefix of a CIDR checked by isCidr. */
function parseCidr(cidr: string): { family: 'ipv4' | 'ipv6'; net: string; prefix: number } {
  const [net, prefix] = cidr.split('/') as [string, string];
  return { family: isIP(net) === 6 ? 'ipv6' : 'ipv4', net, prefix: Number(prefix) };
}

/** Whether CIDR `inner` lies inside CIDR `outer` (same family, a longer or equal prefix, its network inside). */
function within(inner: string, outer: string): boolean {
  const i = parseCidr(inner);
  const o = parseCidr(outer);
  if (i.family !== o.family || i.prefix < o.prefix) return false;
  const list = new BlockList();
  list.addSubnet(o.net, o.prefix, o.family);
  return list.check(i.net, i.family);
}

/** Whether `cidr` is an IPv4 or IPv6 CIDR whose prefix fits the address. */
function isCidr(cidr: string): boolean {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
  if (!m) return false;
  const family = isIP(m[1] as string);
  return family !== 0 && Number(m[2]) <= (family === 4 ? 32 : 128);
}

/** Checks what only a CNPG offering has; `fail(field, problem, fix)` throws the definition's error. */
export function checkCnpgOffering(o: BackendCnpgOffering, fail: (field: string, problem: string, fix: string) => never): void {
  for (const plan of o.plans) {
    if (!o.sizes[plan.size])
      fail(`cnpg.sizes.${plan.size}`, `is missing (plan "${plan.name}" uses it)`, 'add storage, cpu and memory for it');
    if (o.instances[plan.topology] === undefined)
      fail(`cnpg.instances.${plan.topology}`, `is missing (plan "${plan.name}" uses it)`, 'add the number of PostgreSQL instances for it');
  }
  for (const v of o.services) {
    if (!o.images[v]) fail(`cnpg.images["${v}"]`, 'is missing', `add the PostgreSQL image CNPG runs for ${v}`);
  }
  if (!o.sourceRanges?.length)
    fail(
      'cnpg.sourceRanges',
      `is missing: the instances' ${o.serviceType ?? 'LoadBalancer'} Service would admit any address`,
      'list the CIDRs your app clusters connect from (their nodes\' or NAT gateways\' addresses), e.g. ["10.0.0.0/8"]',
    );
  for (const [i, cidr] of o.sourceRanges.entries()) {
    if (!isCidr(cidr))
      fail(`cnpg.sourceRanges[${i}]`, `"${cidr}" is not a CIDR`, 'write an address and a prefix length, e.g. "10.0.0.0/8"');
  }
  if (o.backups) checkBackupStore(o.backups, fail);
  for (const [i, cidr] of (o.clusterNetworks ?? []).entries()) {
    if (!isCidr(cidr))
      fail(`cnpg.clusterNetworks[${i}]`, `"${cidr}" is not a CIDR`, 'write an address and a prefix length, e.g. "10.244.0.0/16"');
    // A range inside the control plane's network would admit only its own Pods, which the except takes out again.
    const j = o.sourceRanges.findIndex((r) => within(r, cidr));
    if (j >= 0)
      fail(
        `cnpg.clusterNetworks[${i}]`,
        `"${cidr}" contains sourceRanges[${j}] "${o.sourceRanges[j]}", which would then admit nothing`,
        "list the app clusters' addresses outside the control plane's networks in sourceRanges",
      );
  }
}

/** The synth setting that replaces the offering's PostgreSQL image of a service version (`cnpg.image.a9s-postgresql15`). */
export const cnpgImageSetting = (service: string): string => `cnpg.image.${service}`;

export interface CnpgInstanceProps {
  readonly offering: BackendCnpgOffering;
  /** Claim parameter → PostgreSQL setting name (`maxConnections` → `max_connections`). */
  readonly parameters: readonly ParameterMapping[];
  readonly ignoredParameters: readonly string[];
}

/**
 * The CNPG Cluster of a PostgresqlInstance: image from the service version, instances, storage and resources from
 * the plan, parameters as PostgreSQL settings, and an external Service of the primary for app clusters.
 */
export function cnpgInstance(p: CnpgInstanceProps): Recipe {
  const o = p.offering;
  // CNPG takes every setting as a string (`spec.postgresql.parameters` is map[string]string): 200 → "200".
  const asString: Transform = { type: 'format', format: '%s' };
  const external = 'spec.managed.services.additional[0]';
  const instance = kubernetesObject({
    resource: CNPG_CLUSTER,
    providerConfigName: o.providerConfigName,
    readiness: CNPG_CLUSTER_READY,
    status: CNPG_STATUS,
    fields: [
      // Each version's image, or the platform's own (`--setting cnpg.image.<service>=<image>`: pinned by digest).
      {
        from: 'spec.service',
        to: 'spec.imageName',
        required: true,
        transforms: [
          { type: 'map', map: o.images, settings: Object.fromEntries(Object.keys(o.images).map((v) => [v, cnpgImageSetting(v)])) },
        ],
      },
      { from: CLAIM_NAME, to: `metadata.labels[${CNPG_INSTANCE_LABEL}]`, required: true },
      // The application database and its owner: CNPG writes the owner's credentials to `<claim>-app`. An instance
      // restored from backups (`restoreFrom`, offerings with a store) bootstraps by recovery instead.
      { to: 'spec.bootstrap.initdb.database', value: CNPG_APP_OWNER, ...(o.backups ? { ifUnset: RESTORE_FROM } : {}) },
      { to: 'spec.bootstrap.initdb.owner', value: CNPG_APP_OWNER, ...(o.backups ? { ifUnset: RESTORE_FROM } : {}) },
      { to: 'spec.bootstrap.initdb.postInitSQL', value: [...CNPG_SUPERUSER_SETTINGS], ...(o.backups ? { ifUnset: RESTORE_FROM } : {}) },
      {
        to: 'spec.bootstrap.initdb.postInitApplicationSQL',
        value: [...CNPG_OWNER_TRIGGER_SQL],
        ...(o.backups ? { ifUnset: RESTORE_FROM } : {}),
      },
      ...CNPG_PG_HBA.map((line, i): FieldMapping =>
        line.includes('%s')
          ? { from: CLAIM_NAME, to: `spec.postgresql.pg_hba[${i}]`, required: true, transforms: [loginGroupOf(line)] }
          : { to: `spec.postgresql.pg_hba[${i}]`, value: line },
      ),
      { to: `${external}.selectorType`, value: 'rw' },
      { to: `${external}.serviceTemplate.spec.type`, value: o.serviceType ?? 'LoadBalancer' },
      ...((o.serviceType ?? 'LoadBalancer') === 'LoadBalancer'
        ? [{ to: `${external}.serviceTemplate.spec.loadBalancerSourceRanges`, value: [...o.sourceRanges] }]
        : []),
      // The client's own address reaches PostgreSQL and the NetworkPolicy (a node's SNAT would hide it).
      { to: `${external}.serviceTemplate.spec.externalTrafficPolicy`, value: 'Local' },
      ...(o.serviceAnnotations && Object.keys(o.serviceAnnotations).length
        ? [{ to: `${external}.serviceTemplate.metadata.annotations`, value: { ...o.serviceAnnotations } }]
        : []),
      // Found by it: a binding's `uri` names the address the load balancer gives this Service (cnpgBinding).
      { from: CLAIM_NAME, to: `${external}.serviceTemplate.metadata.labels[${CNPG_INSTANCE_LABEL}]`, required: true },
      {
        from: CLAIM_NAME,
        to: `${external}.serviceTemplate.metadata.name`,
        required: true,
        transforms: [{ type: 'format', format: `%s${CNPG_EXTERNAL_SERVICE_SUFFIX}` }],
      },
      ...reaperRole(),
      ...loginGroupRole(),
      ...(o.backups ? [...clusterBackupFields(o.backups), ...clusterRecoveryFields(o.backups)] : []),
    ],
  });
  const networkPolicy = instanceNetworkPolicy(o);
  // The backups' schedule goes with the Cluster (its owner reference); absent when the offering has no store.
  const scheduled = o.backups ? scheduledBackup(o.backups, o.providerConfigName) : undefined;
  const companions = [networkPolicy, reaperSecret(o), reaperDeployment(o), ...(scheduled ? [scheduled] : [])];
  return {
    ...instance,
    // The claim says what CNPG is doing, and fails with CNPG's reason when CNPG gives up.
    failedStatePaths: [CNPG_PHASE_PATHS[0]],
    failedStates: CNPG_FAILED_PHASES,
    progressPaths: CNPG_PHASE_PATHS,
    diagnostics: CNPG_POD_DIAGNOSTICS,
    errorAdvice: CNPG_INSTANCE_ADVICE,
    ...(o.backups ? { shownConditions: [archivingCondition(o.backups)] } : {}),
    related: bindingRoles('v1'),
    // With backups, a Restore claim of the instance makes it anew from one of its Backups (cnpg-backup.ts).
    ...(o.backups ? { restoredBy: cnpgRestoredBy('v1') } : {}),
    companions: companions.map((c) => c.v1),
    v2: {
      ...instance.v2,
      related: bindingRoles('v2'),
      ...(o.backups ? { restoredBy: cnpgRestoredBy('v2') } : {}),
      companions: companions.map((c) => c.v2),
    },
    parametersTo: 'spec.postgresql.parameters',
    parameters: p.parameters.map((m) => ({ ...m, transforms: [...(m.transforms ?? []), asString] })),
    ignoredParameters: p.ignoredParameters,
    planTable: {
      fromFieldPath: 'spec.plan',
      plans: Object.fromEntries(
        o.plans.map((plan) => {
          const size = o.sizes[plan.size] as CnpgSize;
          return [
            plan.name,
            {
              'spec.instances': o.instances[plan.topology],
              'spec.storage.size': size.storage,
              'spec.resources.requests.cpu': size.cpu,
              'spec.resources.limits.cpu': size.cpu,
              'spec.resources.requests.memory': size.memory,
              'spec.resources.limits.memory': size.memory,
            },
          ];
        }),
      ),
    },
  };
}

/** A source range without the control plane's own networks inside it. */
function ipBlock(cidr: string, clusterNetworks: readonly string[]): { cidr: string; except?: string[] } {
  const except = clusterNetworks.filter((n) => within(n, cidr));
  return except.length ? { cidr, except } : { cidr };
}

/**
 * The NetworkPolicy of an instance's Pods (CNPG labels each `cnpg.io/cluster=<claim>`, its Jobs' too; it makes no
 * policy itself): PostgreSQL's port from the offering's source ranges, anything from the instance's own Pods
 * (replication, the instance manager), the status port from the operator's namespace, nothing else — not the
 * database Pods of another claim, another tenant's namespace or a root namespace's konnector.
 */
function instanceNetworkPolicy(o: BackendCnpgOffering) {
  const tcp = (port: number) => ({ protocol: 'TCP', port });
  const selector = (at: string): FieldMapping => ({ from: CLAIM_NAME, to: `${at}.matchLabels[cnpg.io/cluster]`, required: true });
  return kubernetesCompanion(CNPG_NETWORK_POLICY, {
    resource: { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
    providerConfigName: o.providerConfigName,
    fields: [
      selector('spec.podSelector'),
      { to: 'spec.policyTypes', value: ['Ingress'] },
      {
        to: 'spec.ingress[0]',
        value: {
          from: o.sourceRanges.map((cidr) => ({ ipBlock: ipBlock(cidr, o.clusterNetworks ?? []) })),
          ports: [tcp(CNPG_POSTGRESQL_PORT)],
        },
      },
      selector('spec.ingress[1].from[0].podSelector'),
      {
        to: 'spec.ingress[2]',
        value: {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': o.operatorNamespace ?? 'cnpg-system' } } }],
          ports: [tcp(CNPG_STATUS_PORT)],
        },
      },
      { from: CLAIM_NAME, to: `spec.ingress[3].from[0].podSelector.matchLabels[${CNPG_REAPER_LABEL}]`, required: true },
      { to: 'spec.ingress[3].ports', value: [tcp(CNPG_POSTGRESQL_PORT)] },
    ],
  });
}

/** The reaper's role, first in the Cluster's `spec.managed.roles` (the bindings' roles follow: bindingRoles). */
function reaperRole(): FieldMapping[] {
  const at = 'spec.managed.roles[0]';
  return [
    { to: `${at}.name`, value: CNPG_REAPER_ROLE },
    { to: `${at}.comment`, value: 'klutch-kit: ends the sessions of revoked binding roles' },
    { to: `${at}.ensure`, value: 'present' },
    { to: `${at}.login`, value: true },
    { to: `${at}.inRoles`, value: ['pg_signal_backend'] },
    // One pass at a time; a second for a pass that overlaps a restart.
    { to: `${at}.connectionLimit`, value: 2 },
    {
      from: CLAIM_NAME,
      to: `${at}.passwordSecret.name`,
      required: true,
      transforms: [{ type: 'format', format: `%s${CNPG_REAPER_SECRET_SUFFIX}` }],
    },
  ];
}

/** `format` as a transform that puts the claim's login group (CNPG_LOGIN_GROUP_FORMAT) where `%s` stands. */
function loginGroupOf(format: string): Transform {
  return { type: 'format', format: format.replace('%s', CNPG_LOGIN_GROUP_FORMAT) };
}

/** The instance's login group (CNPG_LOGIN_GROUP_FORMAT), second in `spec.managed.roles`: a group, no login itself. */
function loginGroupRole(): FieldMapping[] {
  const at = 'spec.managed.roles[1]';
  return [
    { from: CLAIM_NAME, to: `${at}.name`, required: true, transforms: [loginGroupOf('%s')] },
    { to: `${at}.comment`, value: "klutch-kit: the roles that may log in to this instance (pg_hba); its bindings' roles" },
    { to: `${at}.ensure`, value: 'present' },
    { to: `${at}.login`, value: false },
  ];
}

/** The reaper's password, generated once by the function and kept; read by CNPG (the role) and the reaper's Pod. */
function reaperSecret(o: BackendCnpgOffering) {
  const c = kubernetesCompanion(CNPG_REAPER_SECRET, {
    resource: { apiVersion: 'v1', kind: 'Secret' },
    providerConfigName: o.providerConfigName,
    fields: [
      { from: CLAIM_NAME, to: 'metadata.name', required: true, transforms: [{ type: 'format', format: `%s${CNPG_REAPER_SECRET_SUFFIX}` }] },
      { to: `metadata.labels[${CNPG_RELOAD_LABEL}]`, value: 'true' },
      { to: 'type', value: 'kubernetes.io/basic-auth' },
      { to: 'stringData.username', value: CNPG_REAPER_ROLE },
    ],
  });
  const generated = [{ to: 'stringData.password' }];
  return { v1: { ...c.v1, generated }, v2: { ...c.v2, generated } };
}

/**
 * The reaper: one Pod of the instance's own PostgreSQL image (it has psql; the offering's map of service versions),
 * without a service account token, as the image's postgres user with nothing writable, that runs CNPG_REAPER_SQL
 * every CNPG_REAPER_INTERVAL_S seconds against the instance's primary (`<claim>-rw`), reading the password file on
 * each pass. Its failures are in its log; the claim's readiness is the database's, not the reaper's. It is composed
 * from the first revoked binding role on (bindingRoles' `gone`, kept from then on): a new instance has no session to
 * end, and a Pod beside each starting instance slowed the start of PostgreSQL on a busy node (docs/benchmarks.md).
 */
function reaperDeployment(o: BackendCnpgOffering) {
  const c = reaperDeploymentFields(o);
  // A revoked role has no password (bindingRoles' `gone`); the login group has no login either, but a password to lose.
  const when = { at: 'spec.managed.roles', has: { disablePassword: true } };
  return { v1: { ...c.v1, when }, v2: { ...c.v2, when } };
}

/** The reaper's Deployment as a companion on each target, without its `when` (reaperDeployment). */
function reaperDeploymentFields(o: BackendCnpgOffering) {
  const SECRET_DIR = '/etc/klutch/session-reaper';
  const CA_DIR = '/etc/klutch/postgresql-ca';
  // psql of whichever PostgreSQL the image has (CNPG's images: /usr/lib/postgresql/<major>/bin); a TERM ends the sleep.
  const script = [
    "trap 'exit 0' TERM",
    'for d in /usr/lib/postgresql/*/bin; do PATH="$d:$PATH"; done',
    'while :; do',
    `  PGPASSWORD="$(cat ${SECRET_DIR}/password)" psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$REAPER_SQL" || echo "session reaper: the pass failed; next in ${CNPG_REAPER_INTERVAL_S} s" >&2`,
    `  sleep ${CNPG_REAPER_INTERVAL_S} & wait $!`,
    'done',
  ].join('\n');
  const labels = (at: string): FieldMapping[] => [
    { to: `${at}[app.kubernetes.io/name]`, value: 'klutch-session-reaper' },
    { from: CLAIM_NAME, to: `${at}[${CNPG_REAPER_LABEL}]`, required: true },
  ];
  const pod = 'spec.template.spec';
  const container = `${pod}.containers[0]`;
  return kubernetesCompanion(CNPG_REAPER, {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment' },
    providerConfigName: o.providerConfigName,
    fields: [
      { from: CLAIM_NAME, to: 'metadata.name', required: true, transforms: [{ type: 'format', format: `%s${CNPG_REAPER_SECRET_SUFFIX}` }] },
      ...labels('metadata.labels'),
      { to: 'spec.replicas', value: 1 },
      { to: 'spec.strategy.type', value: 'Recreate' },
      ...labels('spec.selector.matchLabels'),
      ...labels('spec.template.metadata.labels'),
      { to: `${pod}.automountServiceAccountToken`, value: false },
      { to: `${pod}.enableServiceLinks`, value: false },
      {
        to: `${pod}.securityContext`,
        value: { runAsNonRoot: true, runAsUser: 26, runAsGroup: 26, seccompProfile: { type: 'RuntimeDefault' } },
      },
      { to: `${container}.name`, value: 'session-reaper' },
      { from: 'spec.service', to: `${container}.image`, required: true, transforms: [{ type: 'map', map: o.images }] },
      { to: `${container}.command`, value: ['/bin/sh', '-c', script] },
      { to: `${container}.env[0].name`, value: 'PGHOST' },
      { from: CLAIM_NAME, to: `${container}.env[0].value`, required: true, transforms: [{ type: 'format', format: '%s-rw' }] },
      {
        to: `${container}.env[1]`,
        value: { name: 'PGPORT', value: String(CNPG_POSTGRESQL_PORT) },
      },
      ...Object.entries({
        PGDATABASE: 'postgres',
        PGUSER: CNPG_REAPER_ROLE,
        PGAPPNAME: CNPG_REAPER_ROLE,
        PGSSLMODE: 'verify-full',
        PGSSLROOTCERT: `${CA_DIR}/${CNPG_CA_KEY}`,
        PGCONNECT_TIMEOUT: '10',
        REAPER_SQL: CNPG_REAPER_SQL,
      }).map(([name, value], i): FieldMapping => ({ to: `${container}.env[${i + 2}]`, value: { name, value } })),
      {
        to: `${container}.securityContext`,
        value: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      },
      // No CPU request: it sleeps, and a request would hold back a share of the node's CPU an instance may need.
      { to: `${container}.resources`, value: { requests: { memory: '16Mi' }, limits: { memory: '64Mi' } } },
      {
        to: `${container}.volumeMounts`,
        value: [
          { name: 'password', mountPath: SECRET_DIR, readOnly: true },
          { name: 'ca', mountPath: CA_DIR, readOnly: true },
        ],
      },
      { to: `${pod}.volumes[0].name`, value: 'password' },
      {
        from: CLAIM_NAME,
        to: `${pod}.volumes[0].secret.secretName`,
        required: true,
        transforms: [{ type: 'format', format: `%s${CNPG_REAPER_SECRET_SUFFIX}` }],
      },
      { to: `${pod}.volumes[0].secret.items`, value: [{ key: 'password', path: 'password' }] },
      { to: `${pod}.volumes[1].name`, value: 'ca' },
      // The CA's certificate only: the Secret holds its key too.
      {
        from: CLAIM_NAME,
        to: `${pod}.volumes[1].secret.secretName`,
        required: true,
        transforms: [{ type: 'format', format: `%s${CNPG_CA_SECRET_SUFFIX}` }],
      },
      { to: `${pod}.volumes[1].secret.items`, value: [{ key: CNPG_CA_KEY, path: CNPG_CA_KEY }] },
    ],
  });
}

/**
 * The Cluster's `spec.managed.roles`: one role per cnpg binding of the claim, which can log in with the password of
 * the binding's Secret (`<binding>-cnpg-binding`, keys username and password as CNPG reads them) and is a member of
 * the application owner; a role whose binding is gone (or being deleted) stays listed as revoked (NOLOGIN, no
 * password, in no group), so the old password no longer connects whatever the role owns
 * (docs/decisions/cnpg-lifecycle.md).
 */
function bindingRoles(target: 'v1' | 'v2'): RelatedList {
  return {
    apiVersion: CNPG_BINDING_COMPOSITE.apiVersion,
    kind: CNPG_BINDING_COMPOSITE.kind[target],
    match: [
      { path: 'spec.instanceRef', from: CLAIM_NAME },
      { path: 'spec.compositionRef.name', equals: CNPG_BINDING_COMPOSITE.composition },
    ],
    to: 'spec.managed.roles',
    key: 'name',
    item: [
      {
        from: CLAIM_NAME,
        to: 'name',
        required: true,
        transforms: [{ type: 'format', format: CNPG_ROLE_FORMAT }],
        limit: ROLE_NAME_LIMIT,
      },
      { to: 'comment', value: CNPG_ROLE_COMMENT },
      { to: 'ensure', value: 'present' },
      { to: 'login', value: true },
      { to: 'inRoles[0]', value: CNPG_APP_OWNER },
      // The instance's login group (pg_hba admits its members): the binding's instanceRef is the instance's claim name.
      { from: 'spec.instanceRef', to: 'inRoles[1]', required: true, transforms: [loginGroupOf('%s')] },
      {
        from: CLAIM_NAME,
        to: 'passwordSecret.name',
        required: true,
        transforms: [{ type: 'format', format: `%s${CNPG_BINDING_SECRET_SUFFIX}` }],
      },
    ],
    // Revoked, not dropped: DROP ROLE fails while the role owns a table (CNPG then leaves it able to log in), NOLOGIN
    // and no password work whatever it owns. The role stays, out of the owner's group, with what it made.
    gone: { ensure: 'present', login: false, disablePassword: true, inRoles: [], comment: CNPG_ROLE_COMMENT },
    // A restored instance's database has its source's roles with their passwords: the source's bindings' roles are
    // revoked here from the start, so their creds open the source only.
    revoke: [
      { path: 'spec.instanceRef', from: `${RESTORE_FROM}.instance` },
      { path: 'spec.compositionRef.name', equals: CNPG_BINDING_COMPOSITE.composition },
    ],
    // An expired binding's role is revoked as a deleted one's is: NOLOGIN, no password, its sessions ended.
    expiresAt: BINDING_EXPIRES_AT,
    // A rotated binding's second role, with its own Secret; each role revoked once its overlap ended.
    rotation: {
      statusAt: CNPG_ROTATION_STATUS,
      second: [
        {
          from: CLAIM_NAME,
          to: 'name',
          required: true,
          transforms: [{ type: 'format', format: CNPG_ROTATED_ROLE_FORMAT }],
          limit: ROLE_NAME_LIMIT,
        },
        {
          from: CLAIM_NAME,
          to: 'passwordSecret.name',
          required: true,
          transforms: [{ type: 'format', format: `%s${CNPG_ROTATED_SECRET_SUFFIX}` }],
        },
      ],
    },
  };
}

/**
 * A `patchesFrom` reference of the binding's Object: the field `fieldPath` of the instance's object
 * `<instanceRef><suffix>` (in the claim's namespace) copied to `toFieldPath` of the Secret the Object holds.
 */
function copyFrom(i: number, kind: 'Secret' | 'Service', suffix: string, fieldPath: string, toFieldPath: string): FieldMapping[] {
  const at = `spec.references[${i}].patchesFrom`;
  return [
    { to: `${at}.apiVersion`, value: 'v1' },
    { to: `${at}.kind`, value: kind },
    { from: 'spec.instanceRef', to: `${at}.name`, required: true, transforms: [{ type: 'format', format: `%s${suffix}` }] },
    { from: 'metadata.namespace', to: `${at}.namespace` },
    { from: CLAIM_NAMESPACE, to: `${at}.namespace` },
    { to: `${at}.fieldPath`, value: fieldPath },
    { to: `spec.references[${i}].toFieldPath`, value: toFieldPath },
  ];
}

/**
 * A ServiceBinding on CNPG: an Object holding the Secret `<claim><CNPG_BINDING_SECRET_SUFFIX>` in the a8s keys: the
 * binding's own role (`binding-<claim>`) and a password the function generates once and keeps, which the instance's
 * Cluster lists as that role's `passwordSecret`; the database name and the address of the instance's external
 * Service copied by provider-kubernetes; published through the Object's connectionDetails as `<claim>-creds`.
 */
export function cnpgBinding(p: { readonly providerConfigName?: string } = {}): Recipe {
  const lb = 'status.loadBalancer.ingress[0].ip';
  const fromSecret = {
    at: 'spec.connectionDetails',
    nameSuffix: CNPG_BINDING_SECRET_SUFFIX,
    keys: [...CNPG_BINDING_KEYS, CNPG_CA_KEY, ...CNPG_SERVICE_BINDING_KEYS],
  };
  const recipe = kubernetesObject({
    resource: { apiVersion: 'v1', kind: 'Secret' },
    providerConfigName: p.providerConfigName,
    status: CNPG_STATUS,
    connectionSecret: { nameSuffix: '-creds', fromSecret },
    fields: [
      {
        from: CLAIM_NAME,
        to: 'metadata.name',
        required: true,
        transforms: [{ type: 'format', format: `%s${CNPG_BINDING_SECRET_SUFFIX}` }],
      },
      { to: `metadata.labels[${CNPG_RELOAD_LABEL}]`, value: 'true' },
      { to: 'type', value: 'Opaque' },
      { to: 'stringData.type', value: 'postgresql' },
      { to: 'stringData.provider', value: 'klutch-kit' },
      { to: 'stringData.port', value: String(CNPG_POSTGRESQL_PORT) },
      { to: 'stringData.sslmode', value: 'verify-ca' },
      {
        from: CLAIM_NAME,
        to: 'stringData.username',
        required: true,
        transforms: [{ type: 'format', format: CNPG_ROLE_FORMAT }],
        limit: ROLE_NAME_LIMIT,
      },
    ],
    wrapperFields: [
      ...copyFrom(0, 'Secret', CNPG_APP_SECRET_SUFFIX, 'data.dbname', 'data.database'),
      ...copyFrom(1, 'Service', CNPG_EXTERNAL_SERVICE_SUFFIX, lb, 'stringData.instance_service'),
      ...roleGate(),
      ...copyFrom(3, 'Secret', CNPG_CA_SECRET_SUFFIX, `data[${CNPG_CA_KEY}]`, `data[${CNPG_CA_KEY}]`),
      ...copyFrom(4, 'Service', CNPG_EXTERNAL_SERVICE_SUFFIX, lb, 'stringData.host'),
      // The address once more, in a field provider-kubernetes compares: it applies by server-side apply and a Secret
      // keeps no `stringData`, so a new address alone (the instance's Service made again) would never reach
      // instance_service and host; a changed annotation makes it apply the whole Secret.
      ...copyFrom(5, 'Service', CNPG_EXTERNAL_SERVICE_SUFFIX, lb, `metadata.annotations[${CNPG_ADDRESS_ANNOTATION}]`),
    ],
  });
  const second = rotatedSecret(p.providerConfigName);
  // Kept from the Secret when a v2 composite takes over the one the v1 package's made: the move keeps the password.
  return {
    ...recipe,
    // The address exists once the load balancer gave the instance's Service one, after the binding was composed: the
    // function reads it from the Service (the instance's label on it) on every run and writes the uri with it, into
    // `data` (ValueFrom.base64): an in-place restore gives the instance a new Service and address.
    valueFrom: {
      apiVersion: 'v1',
      kind: 'Service',
      labels: [{ key: CNPG_INSTANCE_LABEL, from: 'spec.instanceRef' }],
      from: lb,
      to: 'data.uri',
      format: `postgresql://%s:${CNPG_POSTGRESQL_PORT}/${CNPG_APP_OWNER}?sslmode=verify-ca`,
      base64: true,
    },
    generated: [{ to: 'stringData.password', live: { from: 'data.password', base64: true } }],
    errorsFrom: CNPG_ROLE_ERRORS,
    // A binding with a lifetime: its Secret goes at spec.expiresAt, and its instance revokes its role (bindingRoles).
    expiresAt: BINDING_EXPIRES_AT,
    rotation: bindingRotation(fromSecret.keys),
    companions: [second.v1],
    v2: { ...recipe.v2, companions: [second.v2] },
  };
}

/**
 * A binding's credentials rotate with an overlap (docs/decisions/cnpg-rotation.md): its second slot is the user
 * CNPG_ROTATED_ROLE_FORMAT with its own Secret, a companion; while that slot's credentials are the published ones,
 * `<claim>-creds` reads `username` and `password` from it and waits for CNPG to have applied its password.
 */
function bindingRotation(keys: readonly string[]): Rotation {
  // The connection details as cnpgBinding lists them: the role gate first, then one entry per key of `keys`.
  const detail = (key: string) => `spec.connectionDetails[${1 + keys.indexOf(key)}].name`;
  const secret = { from: CLAIM_NAME, required: true, transforms: [{ type: 'format' as const, format: `%s${CNPG_ROTATED_SECRET_SUFFIX}` }] };
  const applied = 'status.managedRolesStatus.passwordStatus[%s].resourceVersion';
  return {
    requestedFrom: `${BINDING_ROTATION}.requested`,
    everyFrom: `${BINDING_ROTATION}.every`,
    overlapFrom: `${BINDING_ROTATION}.overlap`,
    overlap: CNPG_ROTATION_OVERLAP,
    statusAt: CNPG_ROTATION_STATUS,
    annotation: CNPG_ROTATION_ANNOTATION,
    second: CNPG_ROTATED_SECRET,
    switched: [
      {
        from: CLAIM_NAME,
        to: 'spec.connectionDetails[0].fieldPath',
        required: true,
        transforms: [{ type: 'format', format: applied.replace('%s', CNPG_ROTATED_ROLE_FORMAT) }],
      },
      { ...secret, to: detail('username') },
      { ...secret, to: detail('password') },
    ],
    works: {
      users: [CNPG_ROLE_FORMAT, CNPG_ROTATED_ROLE_FORMAT],
      applied,
      reconciled: 'status.managedRolesStatus.byStatus[reconciled]',
      refused: 'status.managedRolesStatus.cannotReconcile[%s]',
    },
    observedAt: 'status.atProvider.manifest',
    receivedFrom: `metadata.annotations[${CREDENTIALS_RECEIVED}]`,
    credentialsAt: 'spec.forProvider.manifest.stringData',
  };
}

/** The second slot's Secret: CNPG's basic-auth keys, its user, and a password generated per generation. */
function rotatedSecret(providerConfigName: string | undefined) {
  const c = kubernetesCompanion(CNPG_ROTATED_SECRET, {
    resource: { apiVersion: 'v1', kind: 'Secret' },
    providerConfigName,
    fields: [
      {
        from: CLAIM_NAME,
        to: 'metadata.name',
        required: true,
        transforms: [{ type: 'format', format: `%s${CNPG_ROTATED_SECRET_SUFFIX}` }],
      },
      { to: `metadata.labels[${CNPG_RELOAD_LABEL}]`, value: 'true' },
      { to: 'type', value: 'kubernetes.io/basic-auth' },
      {
        from: CLAIM_NAME,
        to: 'stringData.username',
        required: true,
        transforms: [{ type: 'format', format: CNPG_ROTATED_ROLE_FORMAT }],
        limit: ROLE_NAME_LIMIT,
      },
    ],
  });
  const generated = [{ to: 'stringData.password' }];
  return { v1: { ...c.v1, generated }, v2: { ...c.v2, generated } };
}

/**
 * A role CNPG cannot reconcile fails the binding's claim in CNPG's words. CNPG's instance manager carries on past a
 * PostgreSQL error it expects of a role (internal/management/controller/roles: a DROP of a role that owns objects, a
 * role of `inRoles` that does not exist, a membership grant PostgreSQL refuses) and lists it in the Cluster's
 * `status.managedRolesStatus.cannotReconcile[<role>]` instead; the binding's creds then never come (roleGate) or stop
 * following its spec. The binding reads that entry of its instance's Cluster (by CNPG_INSTANCE_LABEL in its own
 * namespace) and its claim says `DataServiceReady False RoleNotReconciled: cnpg servicebinding: Cluster pg cannot
 * reconcile role binding-app: could not perform ...`, until CNPG clears the entry.
 */
export const CNPG_ROLE_ERRORS = {
  apiVersion: CNPG_CLUSTER.apiVersion,
  kind: CNPG_CLUSTER.kind,
  labels: [{ key: CNPG_INSTANCE_LABEL, from: 'spec.instanceRef' }],
  from: CLAIM_NAME,
  at: `status.managedRolesStatus.cannotReconcile[${CNPG_ROLE_FORMAT}]`,
  says: `cannot reconcile role ${CNPG_ROLE_FORMAT}`,
  reason: 'RoleNotReconciled',
  // The pass that clears cannotReconcile is not the one that grants the memberships: until CNPG lists the role
  // reconciled, the creds may log in and still lack the instance owner's grants.
  pending: {
    at: 'status.managedRolesStatus.byStatus[pending-reconciliation]',
    item: CNPG_ROLE_FORMAT,
    says: `has yet to reconcile role ${CNPG_ROLE_FORMAT}`,
  },
  // No Cluster of the instance at all: its binding's Object cannot read `<instance>-app`, and provider-kubernetes says
  // so as a failure of its own. The cause is the name the claim gave: the reason the hop reading names as the
  // control plane's (lib/claim-hold.ts REFERENCE_NOT_FOUND).
  absent: {
    reason: 'ReferenceNotFound',
    says: 'spec.instanceRef names the PostgresqlInstance "%s", which has no database in this namespace: create it, or set spec.instanceRef to the name of one it has (an instance made a moment ago has its database within minutes)',
  },
} as const;

/**
 * `<claim>-creds` only once they work. The instance lists the binding's role on its next reconcile (Crossplane's poll
 * of the instance composite: up to a minute), and CNPG then creates the role with the binding's password and writes
 * `status.managedRolesStatus.passwordStatus[<role>]`. The first connection detail reads that entry's `resourceVersion`
 * (the version of the password Secret CNPG applied): provider-kubernetes publishes nothing while one entry cannot be
 * read, and the Secret's `username` listed after it wins, so the claim's Secret appears with the a8s keys when the
 * role can log in. Not its `transactionID`: when the role is listed before the binding's Secret exists, CNPG creates
 * it without a password and records a transactionID with no resourceVersion; it sets the password on a later pass
 * (a password that failed in CI, stop 30). A `dependsOn` reference to
 * the Cluster makes provider-kubernetes (`--enable-watches`, `spec.watch`) reconcile the Object as soon as CNPG
 * writes it, instead of after its error backoff.
 */
function roleGate(): FieldMapping[] {
  const detail = 'spec.connectionDetails[0]';
  const ref = 'spec.references[2].dependsOn';
  const cluster = (at: string): FieldMapping[] => [
    { to: `${at}.apiVersion`, value: CNPG_CLUSTER.apiVersion },
    { to: `${at}.kind`, value: CNPG_CLUSTER.kind },
    { from: 'spec.instanceRef', to: `${at}.name`, required: true },
    { from: 'metadata.namespace', to: `${at}.namespace` },
    { from: CLAIM_NAMESPACE, to: `${at}.namespace` },
  ];
  return [
    ...cluster(detail),
    {
      from: CLAIM_NAME,
      to: `${detail}.fieldPath`,
      required: true,
      transforms: [{ type: 'format', format: `status.managedRolesStatus.passwordStatus[${CNPG_ROLE_FORMAT}].resourceVersion` }],
    },
    { to: `${detail}.toConnectionSecretKey`, value: 'username' },
    ...cluster(ref),
  ];
}
