import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { BindBackend } from './deploy/bind-backend';
import { LEADER_WATCHED, SERVING_WATCHED, type Watched } from './informers';

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/** The ClusterRole the install bundle gives the backend. */
function clusterRoleRules(): Rule[] {
  const chart = new Chart(new App(), 'test');
  new BindBackend(chart, 'backend', {
    issuerUrl: 'https://issuer.example.com',
    clientId: 'klutch-bind',
    publicUrl: 'https://bind.example.com',
    externalAddress: 'https://api.example.com:6443',
  });
  return (Testing.synth(chart) as { kind: string; rules?: Rule[] }[]).find((o) => o.kind === 'ClusterRole')!.rules!;
}

/** `/api/v1/secrets` → ['', 'secrets']; `/apis/g/v1/widgets` → ['g', 'widgets']. */
function groupResource(w: Watched): [string, string] {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/([^/]+)$/.exec(w.path);
  if (!m) throw new Error(`${w.path} is not a cluster-wide collection`);
  return [m[1] ?? '', m[2]!];
}

describe("the backend's informers", () => {
  const rules = clusterRoleRules();
  const table = Object.entries<Watched>({ ...SERVING_WATCHED }).concat(
    Object.entries<Watched>(LEADER_WATCHED).map(([k, w]) => [`leader ${k}`, w]),
  );

  it.each(table)('%s: watches a collection its ClusterRole may list and watch cluster-wide', (_name, w) => {
    const [group, resource] = groupResource(w);
    const held = new Set(rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs));
    expect([...held].filter((v) => v === 'list' || v === 'watch').sort(), `${resource}.${group}`).toEqual(['list', 'watch']);
  });

  it('keeps Secrets narrowed to the kubeconfigs it made: no Secret data of anyone else in its memory', () => {
    const secrets = table.filter(([, w]) => groupResource(w)[1] === 'secrets');
    expect(secrets.map(([name, w]) => [name, w.labelSelector])).toEqual([
      ['leader kubeconfigs', 'klutch-kit.anynines.com/kubeconfig=true'],
    ]);
  });
});
