/**
 * The CloudNativePG backend as the function composes it: the catalog's cnpg recipes, run through the real compose
 * step, give the CNPG Cluster and the binding's Secret Object a reviewer would write by hand (crank render of the
 * same Compositions, validated against CNPG's Cluster CRD, is test/render/render.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Api } from '../apis/api';
import { DataService, planMatrix } from '../apis';
import { composeResource } from '../functions/dataservices/compose';
import { Ready, Severity, Status, Target } from '@crossplane-org/function-sdk-typescript';
import { runFunction } from '../functions/dataservices/fn';
import { RELATED_REQUIREMENT } from '../functions/dataservices/related';
import { compositeOf, inputOf, requestOf, SETTINGS } from '../harness/crossplane/function-requests';
import { inputFor, type Recipe } from '../recipe';
import { loadCatalog } from '../harness/crossplane/catalog';
import { CNPG_SCHEDULED_BACKUP_NAME } from './cnpg-backup';
import type { CnpgOffering } from '../apis/dataservice';
import { observeStatus } from '../functions/dataservices/status';
import { admitsIngress } from '../test/support/network-policy';
import {
  CNPG_ADDRESS_ANNOTATION,
  CNPG_BINDING_COMPOSITE,
  CNPG_BINDING_KEYS,
  CNPG_SERVICE_BINDING_KEYS,
  CNPG_CLUSTER_READY,
  CNPG_INSTANCE_LABEL,
  CNPG_REAPER_LABEL,
  CNPG_REAPER_ROLE,
  CNPG_REAPER_SQL,
  CNPG_ROLE_COMMENT,
  CNPG_OWNER_TRIGGER_SQL,
  CNPG_SUPERUSER_SETTINGS,
} from './cnpg';

const apis: Api[] = await loadCatalog();
/** The instance's ScheduledBackup among its resources: the example offering has backups. */
const SCHEDULED_BACKUP = `cnpg-postgresql-${CNPG_SCHEDULED_BACKUP_NAME}`;
const api = (name: string): Api => apis.find((a) => a.name === name) as Api;
const claimLabels = { 'crossplane.io/claim-name': 'my-claim', 'crossplane.io/claim-namespace': 'team-a' };
/** The platform's role of every instance, which may end sessions and nothing more (CNPG_REAPER_ROLE). */
const REAPER_ROLE = {
  name: CNPG_REAPER_ROLE,
  comment: 'klutch-kit: ends the sessions of revoked binding roles',
  ensure: 'present',
  login: true,
  inRoles: ['pg_signal_backend'],
  connectionLimit: 2,
  passwordSecret: { name: 'my-claim-session-reaper' },
};
/** The instance's login group: pg_hba lets in over the network only its members (CNPG_LOGIN_GROUP_FORMAT). */
const GROUP = 'klutch-login-my-claim';
const GROUP_ROLE = {
  name: GROUP,
  comment: "klutch-kit: the roles that may log in to this instance (pg_hba); its bindings' roles",
  ensure: 'present',
  login: false,
};

/** The function's response for a single-nano cnpg instance `my-claim` of team-a on `target`, with `observed` resources. */
function runInstance(observed: Record<string, Record<string, unknown>> = {}, target: 'v1' | 'v2' = 'v1') {
  const input = inputFor(api('postgresql').backends.cnpg as Recipe, { backend: 'cnpg', service: 'postgresql', settings: SETTINGS, target });
  const xr = compositeOf(api('postgresql'), 'cnpg', { service: 'a9s-postgresql15', plan: 'postgresql-single-nano' });
  if (target === 'v2') xr.metadata = { name: 'my-claim', namespace: 'team-a', uid: 'u-1' };
  const rsp = runFunction(requestOf(input, xr, observed));
  expect(rsp.results.filter((r) => r.severity === Severity.SEVERITY_FATAL)).toEqual([]);
  return rsp;
}

describe('cnpg PostgresqlInstance', () => {
  it('is an Object wrapping a CNPG Cluster: instances, storage and resources from the plan, settings as strings', () => {
    const xr = compositeOf(api('postgresql'), 'cnpg', {
      service: 'a9s-postgresql15',
      plan: 'postgresql-replica-nano',
      parameters: { maxConnections: 200, logMinMessages: 'DEBUG1', workMem: '8MB', sslMinProtocolVersion: 'TLSv1.2' },
    });
    const got = composeResource(inputOf(api('postgresql'), 'cnpg'), xr);
    expect(got.warnings).toEqual([]);
    expect(got.resource).toEqual({
      apiVersion: 'kubernetes.crossplane.io/v1alpha2',
      kind: 'Object',
      metadata: { labels: claimLabels },
      spec: {
        providerConfigRef: { name: 'kubernetes-provider' },
        readiness: CNPG_CLUSTER_READY,
        watch: true,
        forProvider: {
          manifest: {
            apiVersion: 'postgresql.cnpg.io/v1',
            kind: 'Cluster',
            metadata: { name: 'my-claim', namespace: 'team-a', labels: { [CNPG_INSTANCE_LABEL]: 'my-claim' } },
            spec: {
              instances: 3,
              imageName: 'ghcr.io/cloudnative-pg/postgresql:15-bookworm',
              storage: { size: '1Gi' },
              resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '250m', memory: '512Mi' } },
              // The example offering backs up to the sandbox's object store (apis/catalog/postgresql.ts).
              backup: {
                barmanObjectStore: {
                  destinationPath: 's3://klutch-team-a/',
                  endpointURL: 'https://versitygw.klutch-object-store.svc:7070',
                  endpointCA: { name: 'klutch-backup-store', key: 'ca.crt' },
                  s3Credentials: {
                    accessKeyId: { name: 'klutch-backup-store', key: 'ACCESS_KEY_ID' },
                    secretAccessKey: { name: 'klutch-backup-store', key: 'ACCESS_SECRET_KEY' },
                  },
                  wal: { compression: 'gzip', maxParallel: 4 },
                  data: { compression: 'gzip', immediateCheckpoint: true },
                },
                retentionPolicy: '7d',
              },
              bootstrap: {
                initdb: {
                  database: 'app',
                  owner: 'app',
                  postInitSQL: [...CNPG_SUPERUSER_SETTINGS],
                  postInitApplicationSQL: [...CNPG_OWNER_TRIGGER_SQL],
                },
              },
              managed: {
                // The platform's own role first, whose sessions reaper ends a revoked binding role's (bindings' roles after it).
                roles: [REAPER_ROLE, GROUP_ROLE],
                services: {
                  additional: [
                    {
                      selectorType: 'rw',
                      serviceTemplate: {
                        // Labelled with its instance: a binding finds it for its uri.
                        metadata: { name: 'my-claim-external', labels: { 'klutch.anynines.com/instance': 'my-claim' } },
                        // Only the catalog's source ranges, and the client's address kept for PostgreSQL and the NetworkPolicy.
                        spec: {
                          type: 'LoadBalancer',
                          loadBalancerSourceRanges: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
                          externalTrafficPolicy: 'Local',
                        },
                      },
                    },
                  ],
                },
              },
              postgresql: {
                parameters: {
                  // The catalog's offering archives into the sandbox's store: a segment a minute (cnpg-backup.ts).
                  archive_timeout: '60',
                  max_connections: '200',
                  log_min_messages: 'DEBUG1',
                  work_mem: '8MB',
                  ssl_min_protocol_version: 'TLSv1.2',
                },
                // TLS or nothing, and only the reaper and the login group's members, before CNPG's default rule.
                pg_hba: [
                  'hostnossl all all all reject',
                  'hostssl all klutch-session-reaper all scram-sha-256',
                  `hostssl all +${GROUP} all scram-sha-256`,
                  'hostssl all all all reject',
                ],
              },
            },
          },
        },
      },
    });
  });

  it('a plan change is a change of instances, storage and resources of the same Cluster', () => {
    const at = (plan: string) =>
      (
        composeResource(inputOf(api('postgresql'), 'cnpg'), compositeOf(api('postgresql'), 'cnpg', { service: 'a9s-postgresql15', plan }))
          .resource as any
      ).spec.forProvider.manifest;
    const mine = { name: 'my-claim', namespace: 'team-a', labels: { [CNPG_INSTANCE_LABEL]: 'my-claim' } };
    const nano = at('postgresql-single-nano');
    const small = at('postgresql-replica-small');
    expect([nano.metadata, nano.spec.instances, nano.spec.storage.size]).toEqual([mine, 1, '1Gi']);
    expect([small.metadata, small.spec.instances, small.spec.storage.size, small.spec.resources.limits.memory]).toEqual([
      mine,
      3,
      '10Gi',
      '2Gi',
    ]);
  });

  it('the XRD refuses what CNPG cannot honour, naming the compositions that offer it', () => {
    const xrd = JSON.stringify(api('postgresql').rules('v1'));
    for (const p of ['dataChecksums', 'rolePrivileges', 'walLevelLogical'])
      expect(xrd).toContain(`The parameter ${p} is only offered by the a9s-postgresql composition`);
    expect(xrd).toContain('The cnpg-postgresql composition offers the services a9s-postgresql15');
  });
});

describe('cnpg ServiceBinding', () => {
  const bindingXr = (name = 'my-claim'): any =>
    compositeOf(api('servicebinding'), 'cnpg', { instanceRef: 'pg', serviceInstanceType: 'postgresql' }, { name, namespace: 'team-a' });

  it("is an Object holding a Secret in the a8s and servicebinding.io keys: its own role and generated password, the instance's database and address", () => {
    const xr = bindingXr();
    const spec = (composeResource(inputOf(api('servicebinding'), 'cnpg'), xr).resource as any).spec;
    expect(spec.forProvider.manifest).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      // CNPG's operator watches it (its reload label): CNPG applies the password however late the Secret comes.
      metadata: { name: 'my-claim-cnpg-binding', namespace: 'team-a', labels: { 'cnpg.io/reload': 'true' } },
      type: 'Opaque',
      stringData: {
        username: 'binding-my-claim',
        password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        // servicebinding.io's: what the spec names, and what libpq needs apart from the a8s keys.
        type: 'postgresql',
        provider: 'klutch-kit',
        port: '5432',
        sslmode: 'verify-ca',
      },
    });
    expect(
      spec.references
        .slice(0, 2)
        .map((r: any) => [r.patchesFrom.kind, r.patchesFrom.namespace, r.patchesFrom.name, r.patchesFrom.fieldPath, r.toFieldPath]),
    ).toEqual([
      ['Secret', 'team-a', 'pg-app', 'data.dbname', 'data.database'],
      ['Service', 'team-a', 'pg-external', 'status.loadBalancer.ingress[0].ip', 'stringData.instance_service'],
    ]);
    // Reconciled when the instance's Cluster changes (provider-kubernetes watches what an Object references).
    expect(spec.references[2]).toEqual({
      dependsOn: { apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster', name: 'pg', namespace: 'team-a' },
    });
    expect(spec.writeConnectionSecretToRef).toEqual({ name: 'my-claim-creds', namespace: 'team-a' });
    // First the gate (CNPG's record that it applied the password Secret to the role), then the a8s keys; a later entry wins.
    expect(spec.connectionDetails.map((d: any) => [d.kind, d.name, d.fieldPath, d.toConnectionSecretKey])).toEqual([
      ['Cluster', 'pg', 'status.managedRolesStatus.passwordStatus[binding-my-claim].resourceVersion', 'username'],
      ...CNPG_BINDING_KEYS.map((k) => ['Secret', 'my-claim-cnpg-binding', `data.${k}`, k]),
      ['Secret', 'my-claim-cnpg-binding', 'data[ca.crt]', 'ca.crt'],
      ...CNPG_SERVICE_BINDING_KEYS.map((k) => ['Secret', 'my-claim-cnpg-binding', `data.${k}`, k]),
    ]);
    // The server CA beside Klutch's keys, copied from CNPG's `<cluster>-ca` (never its key).
    expect(spec.references[3]).toEqual({
      patchesFrom: { apiVersion: 'v1', kind: 'Secret', name: 'pg-ca', namespace: 'team-a', fieldPath: 'data[ca.crt]' },
      toFieldPath: 'data[ca.crt]',
    });
    // servicebinding.io's host: the same address as Klutch's instance_service.
    expect(spec.references[4]).toEqual({
      patchesFrom: {
        apiVersion: 'v1',
        kind: 'Service',
        name: 'pg-external',
        namespace: 'team-a',
        fieldPath: 'status.loadBalancer.ingress[0].ip',
      },
      toFieldPath: 'stringData.host',
    });
    // And in an annotation, which provider-kubernetes compares (it never sees a change of stringData): a new address
    // applies the Secret again.
    expect(spec.references[5]).toEqual({
      patchesFrom: { ...spec.references[4].patchesFrom },
      toFieldPath: `metadata.annotations[${CNPG_ADDRESS_ANNOTATION}]`,
    });
  });

  it('keeps the password it generated once: every later composition reads it back from the observed Object', () => {
    const input = inputOf(api('servicebinding'), 'cnpg');
    const first = composeResource(input, bindingXr()).resource as any;
    const again = composeResource(input, bindingXr(), first).resource as any;
    expect(again.spec.forProvider.manifest.stringData.password).toBe(first.spec.forProvider.manifest.stringData.password);
    // Two bindings, two passwords.
    const other = composeResource(input, bindingXr('other')).resource as any;
    expect(other.spec.forProvider.manifest.stringData.password).not.toBe(first.spec.forProvider.manifest.stringData.password);
  });

  it('a name of over 55 characters fails the claim, saying why: PostgreSQL would shorten its role', () => {
    const run = (name: string) => runFunction(requestOf(inputOf(api('servicebinding'), 'cnpg'), bindingXr(name)));
    const fatal = (name: string) =>
      run(name)
        .results.filter((r) => r.severity === Severity.SEVERITY_FATAL)
        .map((r) => r.message);
    expect(fatal('b'.repeat(55))).toEqual([]);
    const says = expect.stringContaining(
      `"binding-${'b'.repeat(56)}" is 64 bytes long, 63 at most: PostgreSQL keeps 63 bytes of a role name (binding-<name>); ` +
        'give the ServiceBinding a name of 55 characters at most',
    );
    expect(fatal('b'.repeat(56))).toEqual([says]);
    // The claim's own condition says it too: a Klutch claim shows only its composite's claim conditions.
    expect(run('b'.repeat(56)).conditions).toEqual([
      {
        type: 'DataServiceReady',
        status: Status.STATUS_CONDITION_FALSE,
        reason: 'CannotCompose',
        message: says,
        target: Target.TARGET_COMPOSITE_AND_CLAIM,
      },
    ]);
  });

  it('the XRD refuses a cnpg binding, Backup or Restore of another data service, and a Restore naming no instance', () => {
    expect(JSON.stringify(api('servicebinding').rules('v1'))).toContain(
      'The cnpg-servicebinding composition binds postgresql instances only',
    );
    expect(JSON.stringify(api('backup').rules('v1'))).toContain('The cnpg-backup composition backs up postgresql instances only');
    expect(JSON.stringify(api('restore').rules('v1'))).toContain('The cnpg-restore composition restores postgresql instances only');
    expect(JSON.stringify(api('restore').rules('v1'))).toContain('The cnpg-restore composition needs instanceRef');
  });
});

describe("a cnpg PostgresqlInstance's roles: one per cnpg binding of the claim", () => {
  const bindingXr = (name: string, spec: Record<string, unknown> = {}, namespace = 'team-a'): any =>
    compositeOf(
      api('servicebinding'),
      'cnpg',
      { instanceRef: 'my-claim', serviceInstanceType: 'postgresql', ...spec },
      { name, namespace },
    );
  const instance = compositeOf(api('postgresql'), 'cnpg', { service: 'a9s-postgresql15', plan: 'postgresql-single-nano' });
  const roles = (found: Record<string, unknown>[], observed?: Record<string, unknown>) => {
    const req = requestOf(inputOf(api('postgresql'), 'cnpg'), instance, observed ? { 'cnpg-postgresql': observed } : {});
    req.extraResources = { [RELATED_REQUIREMENT]: { items: found.map((resource) => ({ resource, connectionDetails: {}, ready: 0 })) } };
    const rsp = runFunction(req);
    expect(rsp.results.filter((r) => r.severity === Severity.SEVERITY_FATAL)).toEqual([]);
    return rsp.desired?.resources['cnpg-postgresql']?.resource as any;
  };

  it('lists a role per cnpg binding of this claim in its namespace: login, member of app, its password Secret', () => {
    const a = bindingXr('app');
    const found = [
      a,
      // Another instance's, another namespace's, another backend's binding: no role here.
      bindingXr('x', { instanceRef: 'other' }),
      bindingXr('y', {}, 'team-b'),
      { ...bindingXr('z'), spec: { ...bindingXr('z').spec, compositionRef: { name: 'a8s-servicebinding' } } },
    ];
    const composed = roles(found);
    expect(composed.spec.forProvider.manifest.spec.managed.roles).toEqual([
      REAPER_ROLE,
      GROUP_ROLE,
      {
        name: 'binding-app',
        comment: CNPG_ROLE_COMMENT,
        ensure: 'present',
        login: true,
        inRoles: ['app', GROUP],
        passwordSecret: { name: 'app-cnpg-binding' },
      },
    ]);
  });

  it("attack: a binding whose role name PostgreSQL would shorten is left out; the other bindings' roles are listed", () => {
    // Listed, PostgreSQL would make the role under a shortened name and CNPG's sync of every role would stop at it:
    // no later role of the instance made or revoked. Its own claim fails, saying why (cnpg ServiceBinding above).
    const names = roles([
      bindingXr('app'),
      bindingXr('x'.repeat(56)),
      bindingXr('y'.repeat(55)),
    ]).spec.forProvider.manifest.spec.managed.roles.map((r: any) => r.name);
    expect(names).toEqual([CNPG_REAPER_ROLE, GROUP, 'binding-app', `binding-${'y'.repeat(55)}`]);
  });

  it("attack: an instance restored from another revokes the other's binding roles, which recovery copied with their passwords", () => {
    // The source's binding `orders-app` logs in to the source; its role and password hash are in the restored
    // database too. Listed revoked on the clone, its creds open the source only.
    const found = [
      bindingXr('app'),
      bindingXr('orders-app', { instanceRef: 'orders' }),
      bindingXr('far', { instanceRef: 'orders' }, 'team-b'),
    ];
    const restored = compositeOf(api('postgresql'), 'cnpg', {
      service: 'a9s-postgresql15',
      plan: 'postgresql-single-nano',
      restoreFrom: { instance: 'orders' },
    });
    const req = requestOf(inputOf(api('postgresql'), 'cnpg'), restored, {});
    req.extraResources = { [RELATED_REQUIREMENT]: { items: found.map((resource) => ({ resource, connectionDetails: {}, ready: 0 })) } };
    const listed = (runFunction(req).desired?.resources['cnpg-postgresql']?.resource as any).spec.forProvider.manifest.spec.managed.roles;
    expect(listed.map((r: any) => [r.name, r.login])).toEqual([
      [CNPG_REAPER_ROLE, true],
      [GROUP, false],
      ['binding-app', true],
      ['binding-orders-app', false],
    ]);
    // Not restored: another instance's binding gets nothing here.
    expect(roles(found).spec.forProvider.manifest.spec.managed.roles.map((r: any) => r.name)).toEqual([
      CNPG_REAPER_ROLE,
      GROUP,
      'binding-app',
    ]);
  });

  it("attack: a restored instance lets in over the network only its own login group's members, not the source's roles (a binding deleted since among them)", () => {
    const restored = compositeOf(api('postgresql'), 'cnpg', {
      service: 'a9s-postgresql15',
      plan: 'postgresql-single-nano',
      restoreFrom: { instance: 'orders' },
    });
    const req = requestOf(inputOf(api('postgresql'), 'cnpg'), restored, {});
    req.extraResources = { [RELATED_REQUIREMENT]: { items: [{ resource: bindingXr('app'), connectionDetails: {}, ready: 0 }] } };
    const spec = (runFunction(req).desired?.resources['cnpg-postgresql']?.resource as any).spec.forProvider.manifest.spec;
    // The source's roles are members of klutch-login-orders: no line admits them, the last one rejects them.
    expect(spec.postgresql.pg_hba).toEqual([
      'hostnossl all all all reject',
      `hostssl all ${CNPG_REAPER_ROLE} all scram-sha-256`,
      `hostssl all +${GROUP} all scram-sha-256`,
      'hostssl all all all reject',
    ]);
    expect(spec.managed.roles.find((r: any) => r.name === 'binding-app').inRoles).toEqual(['app', GROUP]);
  });

  it('a binding that is gone leaves its role listed as revoked: NOLOGIN, no password, in no group (a DROP fails on what it owns)', () => {
    const a = bindingXr('app');
    const b = bindingXr('app-2');
    const before = roles([a, b]);
    const after = roles([a], before).spec.forProvider.manifest.spec.managed.roles;
    expect(after.map((r: any) => [r.name, r.login])).toEqual([
      [CNPG_REAPER_ROLE, true],
      [GROUP, false],
      ['binding-app', true],
      ['binding-app-2', false],
    ]);
    expect(after.find((r: any) => r.disablePassword)).toEqual({
      name: 'binding-app-2',
      ensure: 'present',
      login: false,
      disablePassword: true,
      inRoles: [],
      comment: CNPG_ROLE_COMMENT,
    });
  });

  it('the binding composite kinds are those of the servicebinding API on each target', () => {
    expect([api('servicebinding').compositeKind('v1'), api('servicebinding').compositeKind('v2')]).toEqual([
      CNPG_BINDING_COMPOSITE.kind.v1,
      CNPG_BINDING_COMPOSITE.kind.v2,
    ]);
    expect(api('servicebinding').apiVersion).toBe(CNPG_BINDING_COMPOSITE.apiVersion);
    expect(api('servicebinding').compositionName('cnpg')).toBe(CNPG_BINDING_COMPOSITE.composition);
  });
});

describe("a cnpg PostgresqlInstance's NetworkPolicy, composed beside its Cluster", () => {
  const POLICY = 'cnpg-postgresql-network-policy';
  const REAPER = 'cnpg-postgresql-session-reaper';
  const REAPER_SECRET = 'cnpg-postgresql-session-reaper-secret';
  const healthyCluster = {
    status: {
      atProvider: { manifest: { status: { phase: 'Cluster in healthy state', readyInstances: 1 } } },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Available' },
        { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
      ],
    },
  };
  const run = runInstance;

  it("admits PostgreSQL's port only from the source ranges, the instance's own Pods, and the operator's status calls", () => {
    for (const target of ['v1', 'v2'] as const) {
      const object = run({}, target).desired?.resources[POLICY]?.resource as any;
      expect([object.apiVersion, object.kind, object.spec.providerConfigRef]).toEqual(
        target === 'v1'
          ? ['kubernetes.crossplane.io/v1alpha2', 'Object', { name: 'kubernetes-provider' }]
          : ['kubernetes.m.crossplane.io/v1alpha1', 'Object', { name: 'kubernetes-provider', kind: 'ClusterProviderConfig' }],
      );
      expect(object.spec.forProvider.manifest).toEqual({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'my-claim', namespace: 'team-a' },
        spec: {
          podSelector: { matchLabels: { 'cnpg.io/cluster': 'my-claim' } },
          policyTypes: ['Ingress'],
          ingress: [
            {
              from: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'].map((cidr) => ({ ipBlock: { cidr } })),
              ports: [{ protocol: 'TCP', port: 5432 }],
            },
            { from: [{ podSelector: { matchLabels: { 'cnpg.io/cluster': 'my-claim' } } }] },
            {
              from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'cnpg-system' } } }],
              ports: [{ protocol: 'TCP', port: 8000 }],
            },
            // The instance's session reaper (same namespace), to PostgreSQL only.
            {
              from: [{ podSelector: { matchLabels: { [CNPG_REAPER_LABEL]: 'my-claim' } } }],
              ports: [{ protocol: 'TCP', port: 5432 }],
            },
          ],
        },
      });
    }
  });

  it('the claim is Ready only once the NetworkPolicy is applied too; one that cannot be applied says why', () => {
    const rsp = run({ 'cnpg-postgresql': healthyCluster, [REAPER]: healthyCluster, [REAPER_SECRET]: healthyCluster });
    // The Cluster is Ready on its own; the claim waits for its policy (Crossplane: every composed resource Ready).
    expect(rsp.desired?.resources['cnpg-postgresql']?.ready).toBe(Ready.READY_TRUE);
    expect(rsp.desired?.resources[POLICY]?.ready).toBe(Ready.READY_FALSE);
    expect(rsp.conditions.map((c) => [c.status, c.reason, c.message])).toEqual([
      [Status.STATUS_CONDITION_FALSE, 'Provisioning', 'cnpg postgresql: waiting for its NetworkPolicy'],
    ]);
    const refused = {
      status: { conditions: [{ type: 'Synced', status: 'False', reason: 'ReconcileError', message: 'networkpolicies is forbidden' }] },
    };
    expect(
      run({
        'cnpg-postgresql': healthyCluster,
        [POLICY]: refused,
        [REAPER]: healthyCluster,
        [REAPER_SECRET]: healthyCluster,
      }).conditions.map((c) => [c.reason, c.message]),
    ).toEqual([['ReconcileError', 'cnpg postgresql: networkpolicies is forbidden']]);
    const applied = run({
      'cnpg-postgresql': healthyCluster,
      [POLICY]: healthyCluster,
      [REAPER]: healthyCluster,
      [REAPER_SECRET]: healthyCluster,
      [SCHEDULED_BACKUP]: healthyCluster,
    });
    expect(applied.desired?.resources[POLICY]?.ready).toBe(Ready.READY_TRUE);
    expect(applied.conditions.map((c) => c.reason)).toEqual(['Available']);
  });
});

describe("a cnpg PostgresqlInstance's session reaper, beside its Cluster", () => {
  const SECRET = 'cnpg-postgresql-session-reaper-secret';
  const run = runInstance;
  const manifest = (rsp: ReturnType<typeof runInstance>, name: string): any =>
    (rsp.desired?.resources[name]?.resource as any).spec.forProvider.manifest;

  it('its password: a basic-auth Secret the function generates once and keeps, that CNPG watches, on both targets', () => {
    for (const target of ['v1', 'v2'] as const) {
      const first = run({}, target);
      const secret = manifest(first, SECRET);
      expect(secret).toMatchObject({
        apiVersion: 'v1',
        kind: 'Secret',
        // CNPG's operator watches it (its reload label), so the role follows it however late it comes.
        metadata: { name: 'my-claim-session-reaper', namespace: 'team-a', labels: { 'cnpg.io/reload': 'true' } },
        type: 'kubernetes.io/basic-auth',
        stringData: { username: CNPG_REAPER_ROLE },
      });
      expect(secret.stringData.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(manifest(run({}, target), SECRET).stringData.password).not.toBe(secret.stringData.password);
      const kept = run({ [SECRET]: first.desired?.resources[SECRET]?.resource as Record<string, unknown> }, target);
      expect(manifest(kept, SECRET).stringData.password).toBe(secret.stringData.password);
    }
  });

  const REAPER = 'cnpg-postgresql-session-reaper';
  /** The observed Cluster of an instance whose binding `gone` was deleted: its role revoked (bindingRoles' `gone`). */
  const revoked = (target: 'v1' | 'v2') => ({
    'cnpg-postgresql': {
      ...(target === 'v2' ? { apiVersion: 'kubernetes.m.crossplane.io/v1alpha1' } : {}),
      spec: {
        forProvider: {
          manifest: {
            spec: {
              managed: {
                roles: [REAPER_ROLE, { name: 'binding-gone', ensure: 'present', login: false, disablePassword: true, inRoles: [] }],
              },
            },
          },
        },
      },
    },
  });

  it("its Pod comes with the instance's first revoked binding role, and stays; the claim never waits for it", () => {
    for (const target of ['v1', 'v2'] as const) {
      // A new instance: its role and password, no Pod (nothing to end yet).
      const fresh = run({}, target);
      expect(fresh.desired?.resources[REAPER], target).toBeUndefined();
      expect(manifest(fresh, 'cnpg-postgresql').spec.managed.roles[0], target).toEqual(REAPER_ROLE);
      expect(manifest(fresh, SECRET).metadata.name, target).toBe('my-claim-session-reaper');
      // A binding's role revoked: the Pod is composed.
      const first = run(revoked(target), target);
      expect(
        manifest(first, 'cnpg-postgresql').spec.managed.roles.map((r: any) => [r.name, r.login]),
        target,
      ).toEqual([
        [CNPG_REAPER_ROLE, true],
        [GROUP, false],
        ['binding-gone', false],
      ]);
      expect(manifest(first, REAPER).kind, target).toBe('Deployment');
      // Once observed it stays, whatever the list says.
      const seen = first.desired?.resources[REAPER]?.resource as Record<string, unknown>;
      expect(manifest(run({ [REAPER]: seen }, target), REAPER), target).toEqual(manifest(first, REAPER));
    }
    // The claim is Ready with its Cluster, policy and password applied and no reaper.
    const healthy = {
      status: {
        atProvider: { manifest: { status: { phase: 'Cluster in healthy state', readyInstances: 1 } } },
        conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }],
      },
    };
    const ready = run({
      'cnpg-postgresql': healthy,
      'cnpg-postgresql-network-policy': healthy,
      [SECRET]: healthy,
      [SCHEDULED_BACKUP]: healthy,
    });
    expect([ready.desired?.resources[REAPER], ready.conditions.map((c) => c.reason)]).toEqual([undefined, ['Available']]);
  });

  it('one Pod of the instance image, no token, non-root, read-only, reaching the primary over TLS verified by name', () => {
    const d = manifest(run(revoked('v1')), REAPER);
    expect([d.apiVersion, d.kind, d.metadata.name, d.spec.replicas, d.spec.strategy]).toEqual([
      'apps/v1',
      'Deployment',
      'my-claim-session-reaper',
      1,
      { type: 'Recreate' },
    ]);
    const labels = { 'app.kubernetes.io/name': 'klutch-session-reaper', [CNPG_REAPER_LABEL]: 'my-claim' };
    expect([d.spec.selector.matchLabels, d.spec.template.metadata.labels]).toEqual([labels, labels]);
    const pod = d.spec.template.spec;
    expect([pod.automountServiceAccountToken, pod.securityContext.runAsNonRoot]).toEqual([false, true]);
    const [c] = pod.containers;
    expect(c.image).toBe('ghcr.io/cloudnative-pg/postgresql:15-bookworm');
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value]));
    expect(env).toMatchObject({
      PGHOST: 'my-claim-rw',
      PGPORT: '5432',
      PGUSER: CNPG_REAPER_ROLE,
      PGSSLMODE: 'verify-full',
      PGSSLROOTCERT: '/etc/klutch/postgresql-ca/ca.crt',
      REAPER_SQL: CNPG_REAPER_SQL,
    });
    // The password as a file read on every pass, never an env value; the CA's certificate, never its key.
    expect(JSON.stringify(c.env)).not.toContain('password');
    expect(pod.volumes).toEqual([
      { name: 'password', secret: { secretName: 'my-claim-session-reaper', items: [{ key: 'password', path: 'password' }] } },
      { name: 'ca', secret: { secretName: 'my-claim-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    ]);
  });
});

describe('the status of a cnpg PostgresqlInstance', () => {
  // What provider-kubernetes' Object shows of the Cluster, as CNPG writes it (cluster_types.go phases).
  const observed = (status: Record<string, unknown>) => ({
    status: { atProvider: { manifest: { status } }, conditions: [{ type: 'Ready', status: 'False', reason: 'Unavailable' }] },
  });
  const input = inputOf(api('postgresql'), 'cnpg');

  it.each([
    [
      'creating',
      { phase: 'Setting up primary', phaseReason: 'Creating primary instance pg-1' },
      { status: 'False', reason: 'Provisioning', message: 'cnpg postgresql: Setting up primary: Creating primary instance pg-1' },
    ],
    [
      'a resize',
      { phase: 'Creating a new replica', phaseReason: 'Creating replica pg-2' },
      { status: 'False', reason: 'Provisioning', message: 'cnpg postgresql: Creating a new replica: Creating replica pg-2' },
    ],
    [
      'CNPG cannot create an object it needs',
      { phase: 'Unable to create required cluster objects', phaseReason: 'exceeded quota' },
      {
        status: 'False',
        reason: 'ProvisioningFailed',
        message: 'cnpg postgresql: Unable to create required cluster objects: exceeded quota',
      },
    ],
    [
      'unrecoverable',
      { phase: 'Cluster is unrecoverable and needs manual intervention', phaseReason: 'no PVCs' },
      {
        status: 'False',
        reason: 'ProvisioningFailed',
        message: 'cnpg postgresql: Cluster is unrecoverable and needs manual intervention: no PVCs',
      },
    ],
  ])("%s: the claim condition says it in CNPG's words", (_name, status, want) => {
    expect(observeStatus(input, observed(status)).condition).toEqual(want);
  });
});

describe("a cnpg PostgresqlInstance's WAL archiving, on its claim", () => {
  const ready = { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }] } };
  /** The Object of a healthy Cluster whose ContinuousArchiving condition CNPG reports as `archiving`. */
  const cluster = (archiving?: Record<string, unknown>) => ({
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }],
      atProvider: { manifest: { status: { phase: 'Cluster in healthy state', conditions: archiving ? [archiving] : [] } } },
    },
  });
  const conditionsOf = (archiving?: Record<string, unknown>) =>
    runInstance({
      'cnpg-postgresql': cluster(archiving),
      'cnpg-postgresql-network-policy': ready,
      'cnpg-postgresql-session-reaper-secret': ready,
    }).conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, target: c.target }));

  it("shows nothing of it until CNPG reports it, and CNPG's True beside DataServiceReady", () => {
    expect(conditionsOf().map((c) => c.type)).toEqual(['DataServiceReady']);
    expect(
      conditionsOf({
        type: 'ContinuousArchiving',
        status: 'True',
        reason: 'ContinuousArchivingSuccess',
        message: 'Continuous archiving is working',
      }),
    ).toEqual([
      {
        type: 'ContinuousArchiving',
        status: Status.STATUS_CONDITION_TRUE,
        reason: 'ContinuousArchivingSuccess',
        message: 'Continuous archiving is working',
        target: Target.TARGET_COMPOSITE_AND_CLAIM,
      },
      expect.objectContaining({ type: 'DataServiceReady', status: Status.STATUS_CONDITION_TRUE }),
    ]);
  });

  it.each([
    [
      'a name an instance deleted within the retention period left its backups under',
      'unexpected failure invoking barman-cloud-wal-archive: exit status 1',
      /this instance has no backups\. .*Delete the instance's claim and create it under a name of its own .*restoreFrom\.instance/,
    ],
    [
      'a store it cannot reach',
      'unexpected failure invoking barman-cloud-wal-archive: exit status 2',
      /not backed up while it lasts: the object store could not be reached or verified; .*reaches the endpoint of the offering's backups/,
    ],
    [
      'a store that answers with an error (keys it refuses)',
      'unexpected failure invoking barman-cloud-wal-archive: exit status 4',
      /not backed up while it lasts: the object store answered with an error .*Secret klutch-backup-store/,
    ],
  ])("says False, in CNPG's words with what to do, while the instance serves on: %s", (_name, said, advice) => {
    const [archiving, ready] = conditionsOf({
      type: 'ContinuousArchiving',
      status: 'False',
      reason: 'ContinuousArchivingFailing',
      message: said,
    });
    expect(archiving).toMatchObject({
      type: 'ContinuousArchiving',
      status: Status.STATUS_CONDITION_FALSE,
      reason: 'ContinuousArchivingFailing',
      target: Target.TARGET_COMPOSITE_AND_CLAIM,
    });
    expect(archiving?.message).toMatch(new RegExp(`^cnpg postgresql: ${said.replace(/[()]/g, '\\$&')}; `));
    expect(archiving?.message).toMatch(advice);
    expect(ready).toMatchObject({ type: 'DataServiceReady', status: Status.STATUS_CONDITION_TRUE });
  });
});

describe('a cnpg offering', () => {
  const offering = (o: Partial<CnpgOffering>): CnpgOffering => ({
    services: ['pg15'],
    plans: planMatrix({ prefix: 'demo', topologies: { single: ['small'] }, ssl: 'none' }),
    images: { pg15: 'postgres:15' },
    sizes: { small: { storage: '1Gi', cpu: '1', memory: '1Gi' } },
    instances: { single: 1 },
    sourceRanges: ['10.0.0.0/8'],
    ...o,
  });
  const build = (o: Partial<CnpgOffering>) =>
    new DataService({ name: 'demo', kind: 'DemoInstance', defaultBackend: 'cnpg', sizes: ['small'], cnpg: offering(o) });

  it.each([
    ['a size missing', { sizes: {} }, 'cnpg.sizes.small: is missing (plan "demo-single-small" uses it); add storage, cpu and memory'],
    ['a topology without instances', { instances: {} }, 'cnpg.instances.single: is missing'],
    ['a service without an image', { images: {} }, 'cnpg.images["pg15"]: is missing; add the PostgreSQL image CNPG runs for pg15'],
    [
      'no source ranges',
      { sourceRanges: [] },
      "cnpg.sourceRanges: is missing: the instances' LoadBalancer Service would admit any address",
    ],
    [
      'a NodePort without source ranges',
      { serviceType: 'NodePort', sourceRanges: [] },
      "the instances' NodePort Service would admit any address",
    ],
    ['a source range that is no CIDR', { sourceRanges: ['10.0.0.0/8', '10.1.2.3'] }, 'cnpg.sourceRanges[1]: "10.1.2.3" is not a CIDR'],
    ['a prefix too long', { sourceRanges: ['10.0.0.0/33'] }, 'cnpg.sourceRanges[0]: "10.0.0.0/33" is not a CIDR'],
    ['a cluster network that is no CIDR', { clusterNetworks: ['pods'] }, 'cnpg.clusterNetworks[0]: "pods" is not a CIDR'],
    [
      'a source range inside the cluster network',
      { sourceRanges: ['192.168.0.0/16', '10.244.1.0/24'], clusterNetworks: ['10.244.0.0/16'] },
      'cnpg.clusterNetworks[0]: "10.244.0.0/16" contains sourceRanges[1] "10.244.1.0/24", which would then admit nothing',
    ],
  ] as const)('fails at synth time on %s', (_name, o, message) => {
    expect(() => build(o)).toThrow(message);
  });

  it("attack: with clusterNetworks, no Pod of the control plane reaches another claim's PostgreSQL through a source range", () => {
    const policyOf = (o: Partial<CnpgOffering>) => {
      const recipe = build(o).api.backends.cnpg as Recipe;
      const input = inputFor(recipe, { backend: 'cnpg', service: 'demo', settings: SETTINGS });
      const xr = {
        apiVersion: 'x/v1',
        kind: 'XDemo',
        metadata: { name: 'pg-x', labels: { ...claimLabels, 'crossplane.io/claim-name': 'pg' } },
        spec: { service: 'pg15', plan: 'demo-single-small' },
      };
      const rsp = runFunction(requestOf(input, xr, {}));
      expect(rsp.results.map((r) => r.message)).toEqual([]);
      return (rsp.desired?.resources['cnpg-demo-network-policy']?.resource as any).spec.forProvider.manifest;
    };
    const instance = { namespace: 'team-a', labels: { 'cnpg.io/cluster': 'pg', 'cnpg.io/podRole': 'instance' } };
    const ns = (name: string) => ({ namespace: name, namespaceLabels: { 'kubernetes.io/metadata.name': name } });
    const otherTenant = { ...ns('team-b'), labels: { 'cnpg.io/cluster': 'pg' }, ip: '10.244.3.7' };
    const konnector = { ...ns('klutch-bind-root-x'), labels: { app: 'konnector' }, ip: '10.244.0.9' };
    const appCluster = { ip: '10.20.0.5' };
    const operator = { ...ns('cnpg-system'), labels: { app: 'cnpg' }, ip: '10.244.0.4' };
    const replica = { ...ns('team-a'), labels: { 'cnpg.io/cluster': 'pg' }, ip: '10.244.0.30' };
    const fenced = [policyOf({ clusterNetworks: ['10.244.0.0/16'] })];
    expect(fenced[0].spec.ingress[0].from[0]).toEqual({ ipBlock: { cidr: '10.0.0.0/8', except: ['10.244.0.0/16'] } });
    expect([otherTenant, konnector].map((s) => admitsIngress(fenced, instance, s, 5432))).toEqual([false, false]);
    expect([appCluster, replica].map((s) => admitsIngress(fenced, instance, s, 5432))).toEqual([true, true]);
    expect([admitsIngress(fenced, instance, operator, 8000), admitsIngress(fenced, instance, operator, 5432)]).toEqual([true, false]);
    // The instance's session reaper reaches PostgreSQL and nothing else; a Pod of another namespace with its label does not.
    const reaper = { ...ns('team-a'), labels: { [CNPG_REAPER_LABEL]: 'pg' }, ip: '10.244.0.31' };
    const lookalike = { ...ns('team-b'), labels: { [CNPG_REAPER_LABEL]: 'pg' }, ip: '10.244.3.8' };
    expect([5432, 8000].map((port) => admitsIngress(fenced, instance, reaper, port))).toEqual([true, false]);
    expect(admitsIngress(fenced, instance, lookalike, 5432)).toBe(false);
    // Without it, a CNI that matches ipBlock against Pod addresses lets them in (the limit SECURITY.md names).
    const open = [policyOf({})];
    expect([otherTenant, konnector].map((s) => admitsIngress(open, instance, s, 5432))).toEqual([true, true]);
  });

  it('a complete one composes as cnpg-<service>', () => {
    expect(build({}).api.compositionName('cnpg')).toBe('cnpg-demo');
  });
});
