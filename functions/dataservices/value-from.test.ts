import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { inputFor, type Recipe } from '../../recipe';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { answer, claimLabels, compositeOf, fatalMessages, requestOf } from '../../harness/crossplane/function-requests';
import { CNPG_INSTANCE_LABEL } from '../../backends/cnpg';
import { get } from '../../lib/fieldpath';
import { runFunction } from './fn';
import { VALUE_FROM_REQUIREMENT } from './value-from';

type Obj = Record<string, any>;

const apis = await loadCatalog();
const sb = apis.find((a) => a.name === 'servicebinding') as Api;
const spec = { instanceRef: 'pg', serviceInstanceType: 'postgresql' };

/** A Service of the namespace `ns`, labelled as the instance `instance`'s, with a load balancer address or none. */
const service = (name: string, ns: string, instance: string | undefined, ip?: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns, labels: instance ? { [CNPG_INSTANCE_LABEL]: instance } : {} },
  status: { loadBalancer: { ingress: ip ? [{ ip }] : [] } },
});

describe('valueFrom: the cnpg binding uri from its instance Service', () => {
  it.each(['v1', 'v2'] as const)(
    '%s: asks for the instance Services of its namespace; writes the uri once one has an address',
    (target) => {
      const input = inputFor(sb.backends.cnpg as Recipe, { backend: 'cnpg', service: 'servicebinding', target });
      const composite =
        target === 'v1'
          ? compositeOf(sb, 'cnpg', spec, { name: 'app', namespace: 'team-a' })
          : // A tenant's labels on a namespaced composite name another namespace: not where the function looks.
            {
              apiVersion: sb.apiVersion,
              kind: sb.kind,
              metadata: { name: 'app', namespace: 'team-a', labels: claimLabels('pg', 'victim') },
              spec,
            };
      const req = requestOf(input, composite);
      // In `data`, base64 (ValueFrom.base64): provider-kubernetes would never apply a change of it in `stringData`.
      const uriOf = (rsp: ReturnType<typeof runFunction>) => {
        const v = get(Object.values(rsp.desired?.resources ?? {})[0]?.resource, 'spec.forProvider.manifest.data.uri');
        return typeof v === 'string' ? Buffer.from(v, 'base64').toString() : v;
      };

      const first = runFunction(req);
      expect(fatalMessages(first)).toEqual([]);
      expect(first.requirements?.extraResources?.[VALUE_FROM_REQUIREMENT]).toEqual({
        apiVersion: 'v1',
        kind: 'Service',
        namespace: 'team-a',
        matchLabels: { labels: { [CNPG_INSTANCE_LABEL]: 'pg' } },
      });
      expect(uriOf(first)).toBeUndefined();
      // Another namespace's, another instance's, an unlabelled one, and this one's before the load balancer answered.
      const notYet = [
        service('pg-external', 'victim', 'pg', '10.9.9.9'),
        service('other-external', 'team-a', 'other', '10.8.8.8'),
        service('pg-rw', 'team-a', undefined, '10.7.7.7'),
        service('pg-external', 'team-a', 'pg'),
      ];
      const waiting = runFunction(answer(req, VALUE_FROM_REQUIREMENT, notYet));
      expect(uriOf(waiting)).toBeUndefined();
      expect(waiting.requirements).toEqual(first.requirements);
      const found = runFunction(
        answer(req, VALUE_FROM_REQUIREMENT, [...notYet.slice(0, 3), service('pg-external', 'team-a', 'pg', '10.96.200.4')]),
      );
      expect(fatalMessages(found)).toEqual([]);
      expect(uriOf(found)).toBe('postgresql://10.96.200.4:5432/app?sslmode=verify-ca');
    },
  );
});
