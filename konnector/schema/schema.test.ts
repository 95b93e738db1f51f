import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { BIND_API_VERSION, Kinds, type APIServiceBinding, type APIServiceExport } from '../../exports/bind-api';
import { crdEstablished, crdOf, schemaDecision } from './schema';

const binding: APIServiceBinding = {
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceBinding,
  metadata: { name: 'postgresqlinstances.anynines.com', namespace: 'klutch-bind', uid: 'u-binding' },
  spec: { kubeconfigSecretRef: { name: 'kubeconfig-x', namespace: 'klutch-bind', key: 'kubeconfig' } },
};
const schema = {
  openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
};
const exp = (over: Partial<APIServiceExport['spec']> = {}): APIServiceExport => ({
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceExport,
  metadata: { name: 'postgresqlinstances.anynines.com', namespace: 'cluster-x' },
  spec: {
    group: 'anynines.com',
    names: {
      kind: 'PostgresqlInstance',
      plural: 'postgresqlinstances',
      singular: 'postgresqlinstance',
      listKind: 'PostgresqlInstanceList',
    },
    scope: 'Namespaced',
    informerScope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema, subresources: { status: {} } }],
    ...over,
  },
});
const existing = (uid: string | undefined, spec: unknown = crdOf(exp(), binding).spec): V1CustomResourceDefinition =>
  ({
    metadata: {
      name: 'postgresqlinstances.anynines.com',
      ownerReferences: uid ? [{ apiVersion: BIND_API_VERSION, kind: 'APIServiceBinding', name: 'x', uid, controller: true }] : undefined,
    },
    spec: { ...(spec as object), conversion: { strategy: 'None' } },
  }) as V1CustomResourceDefinition;

describe('schemaDecision', () => {
  it.each([
    ['another group', { group: 'evil.io' }, 'describes postgresqlinstances.evil.io'],
    [
      'another plural',
      { names: { ...exp().spec.names, plural: 'customresourcedefinitions' } },
      'spec.names.plural "customresourcedefinitions"',
    ],
  ])('refuses an export whose spec names %s than the binding, and applies nothing', (_what, over, text) => {
    const d = schemaDecision(exp(over), binding, undefined);
    expect(d).toMatchObject({ action: 'refuse', reason: 'ExportNameMismatch' });
    const m = (d as { message: string }).message;
    expect(m).toContain(`APIServiceExport cluster-x/postgresqlinstances.anynines.com ${text.startsWith('describes') ? text : ''}`.trim());
    expect(m).toContain(text);
    expect(m).toContain('APIServiceBinding klutch-bind/postgresqlinstances.anynines.com binds postgresqlinstances.anynines.com');
  });

  it('creates the CRD from the export, owned by the binding as its controller', () => {
    const d = schemaDecision(exp(), binding, undefined);
    expect(d.action).toBe('apply');
    const crd = (d as { crd: { metadata: unknown; spec: unknown } }).crd;
    expect(crd.metadata).toEqual({
      name: 'postgresqlinstances.anynines.com',
      ownerReferences: [
        { apiVersion: BIND_API_VERSION, kind: 'APIServiceBinding', name: binding.metadata.name, uid: 'u-binding', controller: true },
      ],
    });
    expect(crd.spec).toMatchObject({
      group: 'anynines.com',
      scope: 'Namespaced',
      versions: [{ name: 'v1', schema, subresources: { status: {} } }],
    });
  });

  it('leaves its own up-to-date CRD alone (server defaults are not a difference) and follows schema changes', () => {
    expect(schemaDecision(exp(), binding, existing('u-binding'))).toEqual({ action: 'none' });
    const changed = exp({ versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] });
    expect(schemaDecision(changed, binding, existing('u-binding')).action).toBe('apply');
  });

  it.each([
    ['without an owner', undefined, /owned by nobody the konnector knows/],
    [
      'owned by another binding',
      'u-other',
      /owned by APIServiceBinding x \(uid u-other\), not by APIServiceBinding klutch-bind\/postgresqlinstances.anynines.com/,
    ],
  ])('refuses to overwrite a CRD %s and says what to do', (_what, uid, message) => {
    const d = schemaDecision(exp(), binding, existing(uid));
    expect(d).toMatchObject({ action: 'refuse', reason: 'ForeignCustomResourceDefinition' });
    expect((d as { message: string }).message).toMatch(message);
    expect((d as { message: string }).message).toMatch(/Delete that CRD/);
  });

  it('refuses cluster-scoped exports with a reason', () => {
    expect(
      schemaDecision(exp({ scope: 'Cluster', clusterScopedIsolation: 'Prefixed', informerScope: 'Cluster' }), binding, undefined),
    ).toMatchObject({
      action: 'refuse',
      reason: 'ClusterScopedNotSupported',
    });
  });

  it('calls a CRD established only when the API server accepted its names too', () => {
    const crd = (types: string[]) =>
      ({ status: { conditions: types.map((type) => ({ type, status: 'True' })) } }) as V1CustomResourceDefinition;
    expect(crdEstablished(crd(['Established', 'NamesAccepted']))).toBe(true);
    expect(crdEstablished(crd(['Established']))).toBe(false);
    expect(crdEstablished(undefined)).toBe(false);
  });
});
