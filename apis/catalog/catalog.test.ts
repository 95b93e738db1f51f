/** The catalog as a Klutch user meets it: kinds, compositions, services, plans and parameter keys. */
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../harness/crossplane/catalog';

const apis = new Map((await loadCatalog()).map((a) => [a.name, a]));
const enumOf = (api: string, field: string) => apis.get(api)?.spec.toJSON().properties?.[field]?.enum;
const param = (api: string, backend: 'a9s' | 'a8s', from: string) =>
  apis.get(api)?.backends[backend]?.parameters?.find((p) => p.from === from);

describe('the catalog', () => {
  it.each([
    ['postgresql', 'PostgresqlInstance', 'postgresqlinstances', 'a8s', ['a9s', 'a8s', 'cnpg']],
    ['mariadb', 'MariadbInstance', 'mariadbinstances', 'a9s', ['a9s']],
    ['messaging', 'MessagingInstance', 'messaginginstances', 'a9s', ['a9s']],
    ['mongodb', 'MongodbInstance', 'mongodbinstances', 'a9s', ['a9s']],
    ['prometheus', 'PrometheusInstance', 'prometheusinstances', 'a9s', ['a9s']],
    ['search', 'SearchInstance', 'searchinstances', 'a9s', ['a9s']],
    ['logme2', 'Logme2Instance', 'logme2instances', 'a9s', ['a9s']],
    ['keyvalue', 'KeyvalueInstance', 'keyvalueinstances', 'a9s', ['a9s']],
    ['servicebinding', 'ServiceBinding', 'servicebindings', 'a8s', ['a9s', 'a8s', 'cnpg']],
    ['backup', 'Backup', 'backups', 'a8s', ['a9s', 'a8s', 'cnpg']],
    ['restore', 'Restore', 'restores', 'a8s', ['a9s', 'a8s', 'cnpg']],
  ])('%s: claim %s (%s), default backend %s, backends %j', (name, kind, plural, def, backends) => {
    const api = apis.get(name);
    expect(api?.kind).toBe(kind);
    expect(api?.plural).toBe(plural);
    expect(api?.group).toBe('anynines.com');
    expect(api?.version).toBe('v1');
    expect(api?.defaultBackend).toBe(def);
    expect(api?.backendNames).toEqual(backends);
  });

  it("offers Klutch's service versions", () => {
    expect(enumOf('postgresql', 'service')).toEqual(['a9s-postgresql13', 'a9s-postgresql15', 'a9s-postgresql17', 'a9s-postgresql14']);
    expect(enumOf('mariadb', 'service')).toEqual(['a9s-mariadb106', 'a9s-mariadb1011']);
    expect(enumOf('messaging', 'service')).toEqual(['a9s-messaging310', 'a9s-messaging312', 'a9s-messaging313', 'a9s-messaging4']);
    expect(enumOf('keyvalue', 'service')).toEqual(['a9s-keyvalue8']);
  });

  it("offers Klutch's plans", () => {
    expect(enumOf('postgresql', 'plan')).toHaveLength(20 + 3);
    expect(enumOf('prometheus', 'plan')).toEqual([
      'prometheus-single-small',
      'prometheus-single-big',
      'promgraf2-single-small',
      'promgraf2-single-big',
      'prometheus2-grafana10-single-small',
      'prometheus2-grafana10-single-big',
    ]);
    expect(enumOf('search', 'plan')).toEqual([
      'search-single-nano-ssl',
      'search-single-small-ssl',
      'search-single-medium-ssl',
      'search-single-big-ssl',
      'search-cluster-small-ssl',
      'search-cluster-medium-ssl',
      'search-cluster-big-ssl',
    ]);
    expect(enumOf('logme2', 'plan')).toEqual(['logme-single-small-ssl', 'logme-cluster-small-ssl']);
  });

  it('sends each parameter under the key its backend expects', () => {
    expect(param('postgresql', 'a9s', 'tempFileLimit')).toEqual({ from: 'tempFileLimit', to: 'temp_file_limit' });
    expect(param('postgresql', 'a8s', 'tempFileLimit')).toEqual({ from: 'tempFileLimit', to: 'tempFileLimitKiloBytes' });
    expect(param('postgresql', 'a9s', 'logMinMessages')).toEqual({ from: 'logMinMessages', to: 'pg_log_min_messages' });
    expect(param('postgresql', 'a8s', 'logMinMessages')).toEqual({
      from: 'logMinMessages',
      to: 'logMinMessages',
      transforms: [{ type: 'lowercase' }],
    });
    expect(param('postgresql', 'a8s', 'maxWalSenders')?.to).toBe('maxWALSenders');
    expect(param('keyvalue', 'a9s', 'maxmemoryPolicy')?.to).toBe('maxmemory-policy');
    expect(param('messaging', 'a9s', 'tlsProtocols')?.to).toBe('tls-protocols');
    expect(apis.get('postgresql')?.backends.a8s?.ignoredParameters).toContain('workMem');
  });

  it('limits replica settings of KeyValue to replica plans and freezes Prometheus plans', () => {
    expect(
      apis
        .get('keyvalue')
        ?.rules('v1')
        .map((r) => r.message),
    ).toContain('The parameter minReplicasMaxLag is only accepted with replica plans');
    expect(apis.get('prometheus')?.spec.toJSON().properties?.plan?.['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'The plan cannot be changed: create a new instance with the other plan' },
    ]);
  });

  it('lets bindings carry their credentials to the app cluster', () => {
    const sb = apis.get('servicebinding');
    expect(sb?.permissionClaims.map((c) => `${c.resource}/${c.owner}`)).toEqual(['secrets/Provider', 'configmaps/Provider']);
    expect(sb?.backends.a9s?.connectionSecret).toEqual({ nameSuffix: '-creds' });
    expect(sb?.backends.a9s?.providerConfig).toEqual({ fromFieldPath: 'spec.serviceInstanceType', format: '%s-service-broker' });
    expect(apis.get('backup')?.backends.a9s?.providerConfig).toEqual({
      fromFieldPath: 'spec.serviceInstanceType',
      format: '%s-backup-manager',
    });
  });
});
