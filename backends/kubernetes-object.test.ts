/**
 * kubernetesObject(), the one way a backend wraps a Kubernetes object in provider-kubernetes' Object: the legacy
 * Object on v1, the namespaced one with the platform's ClusterProviderConfig on v2; the a8s and cnpg recipes are built
 * by it, so they cannot drift apart (what each composes is in a8s/cnpg tests and test/render).
 */
import { describe, expect, it } from 'vitest';
import { a8sObject, A8S_POSTGRESQL_READY } from './a8s';
import { cnpgBinding } from './cnpg';
import { kubernetesObject, NAMESPACED_OBJECT_WRAPPER, OBJECT_STATUS, OBJECT_WRAPPER, WATCH_WRAPPED } from './kubernetes-object';

const secret = { apiVersion: 'v1', kind: 'Secret' };

describe('kubernetesObject', () => {
  it('wraps in the legacy Object on v1 and the namespaced Object with a ClusterProviderConfig on v2', () => {
    const readiness = { policy: 'AllTrue' };
    const r = kubernetesObject({
      resource: secret,
      fields: [{ to: 'type', value: 'Opaque' }],
      readiness,
      wrapperFields: [{ to: 'spec.references[0].patchesFrom.name', value: 'x' }],
      connectionSecret: { nameSuffix: '-creds' },
    });
    const fields = [{ to: 'spec.readiness', value: readiness }, { to: 'spec.references[0].patchesFrom.name', value: 'x' }, WATCH_WRAPPED];
    expect(r.wrapper).toEqual({ ...OBJECT_WRAPPER, fields });
    expect(r.providerConfig).toEqual({ name: 'kubernetes-provider' });
    expect(r.status).toEqual(OBJECT_STATUS);
    expect(r.connectionSecret).toEqual({ nameSuffix: '-creds' });
    expect(r.v2).toEqual({
      wrapper: { ...NAMESPACED_OBJECT_WRAPPER, fields },
      providerConfig: { name: 'kubernetes-provider', kind: 'ClusterProviderConfig' },
      connectionSecret: { nameSuffix: '-creds', local: true },
    });
  });

  it('leaves readiness to provider-kubernetes when none is given, and sets no connection Secret or error paths unasked', () => {
    const r = kubernetesObject({ resource: secret, fields: [], providerConfigName: 'other' });
    expect(r.wrapper?.fields).toEqual([WATCH_WRAPPED]);
    expect(r.providerConfig).toEqual({ name: 'other' });
    expect(Object.keys(r).sort()).toEqual(['fields', 'providerConfig', 'resource', 'status', 'v2', 'wrapper']);
  });

  it('is what the a8s and cnpg recipes are made of', () => {
    const a8s = a8sObject({ resource: { apiVersion: 'a/v1', kind: 'K' }, fields: [], readiness: A8S_POSTGRESQL_READY });
    const cnpg = cnpgBinding();
    for (const r of [a8s, cnpg]) {
      expect([r.wrapper?.apiVersion, r.v2?.wrapper?.apiVersion, r.v2?.providerConfig?.kind]).toEqual([
        OBJECT_WRAPPER.apiVersion,
        NAMESPACED_OBJECT_WRAPPER.apiVersion,
        'ClusterProviderConfig',
      ]);
      expect(r.wrapper?.fields?.at(-1)).toEqual(WATCH_WRAPPED);
    }
    expect(cnpg.v2?.connectionSecret?.local).toBe(true);
  });
});
