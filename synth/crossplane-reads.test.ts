import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../harness/crossplane/catalog';
import { crossplaneSource } from '../harness/tools/crossplane';
import { AGGREGATE_TO_CROSSPLANE, CROSSPLANE_READS_ROLE, CrossplaneReads, crossplaneReadKinds } from './crossplane-reads';
import { crdNamesIn, resourceNames } from './resource-names';

const apis = await loadCatalog();

describe('CrossplaneReads', () => {
  it("reads only what the recipes' diagnostics, errorsFrom, valueFrom and queue ask for: a cnpg claim's Pods and volume claims, its namespace's ResourceQuotas, Cluster, Service and the instance's Backups, get/list/watch, aggregated into Crossplane's role", () => {
    const kinds = apis.flatMap((a) => Object.values(a.backends)).flatMap(crossplaneReadKinds);
    expect([...new Set(kinds.map((k) => `${k.apiVersion}/${k.kind}`))]).toEqual([
      'postgresql.cnpg.io/v1/Backup',
      'v1/Pod',
      'v1/ResourceQuota',
      'v1/PersistentVolumeClaim',
      'postgresql.cnpg.io/v1/Cluster',
      'v1/Service',
    ]);
    const chart = new Chart(new App(), 'test');
    new CrossplaneReads(chart, 'reads', { kinds, resourceOf: resourceNames(() => crdNamesIn(join(process.cwd(), 'schemas')), 'test') });
    const [role, ...rest] = Testing.synth(chart);
    expect(rest).toEqual([]);
    expect(role).toMatchObject({
      kind: 'ClusterRole',
      metadata: { name: CROSSPLANE_READS_ROLE, labels: { [AGGREGATE_TO_CROSSPLANE]: 'true' } },
      rules: [
        { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['resourcequotas'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['postgresql.cnpg.io'], resources: ['backups'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['postgresql.cnpg.io'], resources: ['clusters'], verbs: ['get', 'list', 'watch'] },
      ],
    });
  });

  it('refuses to make a role without kinds', () => {
    expect(() => new CrossplaneReads(new Chart(new App(), 'test'), 'none', { kinds: [], resourceOf: () => 'x' })).toThrow(
      'no kinds to read',
    );
  });

  it.each(['v1', 'v2'] as const)("Crossplane %s's Helm chart aggregates ClusterRoles with that label into its own", (line) => {
    const text = readFileSync(join(crossplaneSource(line), 'cluster', 'charts', 'crossplane', 'templates', 'clusterrole.yaml'), 'utf8');
    expect(text).toMatch(
      new RegExp(
        `aggregationRule:\\s+clusterRoleSelectors:\\s+- matchLabels:\\s+${AGGREGATE_TO_CROSSPLANE.replaceAll('.', '\\.')}: "true"`,
      ),
    );
  });
});
