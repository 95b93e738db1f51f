/**
 * The CloudNativePG backend as the function composes it: the catalog's cnpg recipes, run through the real compose
 * step, give the CNPG Cluster and the binding's Secret Object a reviewer would write by hand (crank render of the
 * same Compositions, validated against CNPG's Cluster CRD, is test/render/render.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Api } from '../apis/api';
import { DataService, planMatrix } from '../apis';
import { composeResource } from '../functions/dataservices/compose';
import { compositeOf, inputOf } from '../test/support/function';
import { loadCatalog } from '../test/support/catalog';
import type { CnpgOffering } from '../apis/dataservice';
import { observeStatus } from '../functions/dataservices/status';
import { CNPG_BINDING_KEYS, CNPG_CLUSTER_READY } from './cnpg';

const apis: Api[] = await loadCatalog();
const api = (name: string): Api => apis.find((a) => a.name === name) as Api;
const claimLabels = { 'crossplane.io/claim-name': 'my-claim', 'crossplane.io/claim-namespace': 'team-a' };

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
            metadata: { name: 'my-claim', namespace: 'team-a' },
            spec: {
              instances: 3,
              imageName: 'ghcr.io/cloudnative-pg/postgresql:15-bookworm',
              storage: { size: '1Gi' },
              resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '250m', memory: '512Mi' } },
              bootstrap: { initdb: { database: 'app', owner: 'app' } },
              managed: {
                services: {
                  additional: [
                    { selectorType: 'rw', serviceTemplate: { metadata: { name: 'my-claim-external' }, spec: { type: 'LoadBalancer' } } },
                  ],
                },
              },
              postgresql: {
                parameters: { max_connections: '200', log_min_messages: 'DEBUG1', work_mem: '8MB', ssl_min_protocol_version: 'TLSv1.2' },
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
    const nano = at('postgresql-single-nano');
    const small = at('postgresql-replica-small');
    expect([nano.metadata, nano.spec.instances, nano.spec.storage.size]).toEqual([{ name: 'my-claim', namespace: 'team-a' }, 1, '1Gi']);
    expect([small.metadata, small.spec.instances, small.spec.storage.size, small.spec.resources.limits.memory]).toEqual([
      { name: 'my-claim', namespace: 'team-a' },
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
  it("is an Object holding a Secret in the a8s keys, copied from the instance's app-user Secret and external Service", () => {
    const xr = compositeOf(api('servicebinding'), 'cnpg', { instanceRef: 'pg', serviceInstanceType: 'postgresql' });
    const spec = (composeResource(inputOf(api('servicebinding'), 'cnpg'), xr).resource as any).spec;
    expect(spec.forProvider.manifest).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'my-claim-cnpg-binding', namespace: 'team-a' },
      type: 'Opaque',
    });
    expect(
      spec.references.map((r: any) => [
        r.patchesFrom.kind,
        r.patchesFrom.namespace,
        r.patchesFrom.name,
        r.patchesFrom.fieldPath,
        r.toFieldPath,
      ]),
    ).toEqual([
      ['Secret', 'team-a', 'pg-app', 'data.username', 'data.username'],
      ['Secret', 'team-a', 'pg-app', 'data.password', 'data.password'],
      ['Secret', 'team-a', 'pg-app', 'data.dbname', 'data.database'],
      ['Service', 'team-a', 'pg-external', 'status.loadBalancer.ingress[0].ip', 'stringData.instance_service'],
    ]);
    expect(spec.writeConnectionSecretToRef).toEqual({ name: 'my-claim-creds', namespace: 'team-a' });
    expect(spec.connectionDetails.map((d: any) => [d.name, d.fieldPath, d.toConnectionSecretKey])).toEqual(
      CNPG_BINDING_KEYS.map((k) => ['my-claim-cnpg-binding', `data.${k}`, k]),
    );
  });

  it('the XRD refuses a cnpg binding of another data service, and a cnpg Backup or Restore with the reason', () => {
    expect(JSON.stringify(api('servicebinding').rules('v1'))).toContain(
      'The cnpg-servicebinding composition binds postgresql instances only',
    );
    for (const name of ['backup', 'restore']) {
      expect(JSON.stringify(api(name).rules('v1'))).toContain(
        `The cnpg-${name} composition does not exist: CloudNativePG backs up to an object store (barman-cloud) or to CSI volume snapshots`,
      );
    }
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

describe('a cnpg offering', () => {
  const offering = (o: Partial<CnpgOffering>): CnpgOffering => ({
    services: ['pg15'],
    plans: planMatrix({ prefix: 'demo', topologies: { single: ['small'] }, ssl: 'none' }),
    images: { pg15: 'postgres:15' },
    sizes: { small: { storage: '1Gi', cpu: '1', memory: '1Gi' } },
    instances: { single: 1 },
    ...o,
  });
  const build = (o: Partial<CnpgOffering>) =>
    new DataService({ name: 'demo', kind: 'DemoInstance', defaultBackend: 'cnpg', sizes: ['small'], cnpg: offering(o) });

  it.each([
    ['a size missing', { sizes: {} }, 'cnpg.sizes.small: is missing (plan "demo-single-small" uses it); add storage, cpu and memory'],
    ['a topology without instances', { instances: {} }, 'cnpg.instances.single: is missing'],
    ['a service without an image', { images: {} }, 'cnpg.images["pg15"]: is missing; add the PostgreSQL image CNPG runs for pg15'],
  ])('fails at synth time on %s', (_name, o, message) => {
    expect(() => build(o)).toThrow(message);
  });

  it('a complete one composes as cnpg-<service>', () => {
    expect(build({}).api.compositionName('cnpg')).toBe('cnpg-demo');
  });
});
