import { describe, expect, it } from 'vitest';
import { CLAIMED_ROLE, type PermissionClaim } from '../../exports/bind-api';
import { claimedRules, type ExportGrant, type PartialObjectMetadata } from './claimed';

const secrets: PermissionClaim = { group: '', resource: 'secrets', version: 'v1', selector: { names: ['*'], owner: 'Provider' } };
const grant: ExportGrant = { group: 'anynines.com', resource: 'servicebindings', kind: 'ServiceBinding', claims: [secrets] };
const obj = (name: string, extra: Partial<NonNullable<PartialObjectMetadata['metadata']>> = {}): PartialObjectMetadata => ({
  metadata: { name, ...extra },
});
const roleRule = {
  apiGroups: ['rbac.authorization.k8s.io'],
  resources: ['roles'],
  resourceNames: [CLAIMED_ROLE],
  verbs: ['get', 'list', 'watch'],
};

function rules(objects: Record<string, PartialObjectMetadata[]>, grants = [grant], access: 'Object' | 'Namespace' = 'Object') {
  return claimedRules({ grants, objects: (g, r) => objects[`${r}.${g}`] ?? [], access });
}

describe('claimedRules', () => {
  const bound = { 'servicebindings.anynines.com': [obj('sb1')] };

  it('shares a bound object’s -creds Secret and a Secret it owns, never an unrelated one', () => {
    const r = rules({
      ...bound,
      'secrets.': [
        obj('sb1-creds'),
        obj('owned', { ownerReferences: [{ apiVersion: 'anynines.com/v1', kind: 'ServiceBinding', name: 'sb1' }] }),
        obj('instance-admin'),
        obj('ghost-creds'),
        obj('owned-by-other', { ownerReferences: [{ apiVersion: 'postgresql.anynines.com/v1', kind: 'ServiceBinding', name: 'sb1' }] }),
        obj('owned-by-missing', { ownerReferences: [{ apiVersion: 'anynines.com/v1', kind: 'ServiceBinding', name: 'nope' }] }),
      ],
    });
    expect(r).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['owned', 'sb1-creds'], verbs: ['get', 'list', 'watch'] },
      roleRule,
    ]);
  });

  it('follows selector.names, and grants no rule without names', () => {
    const named: ExportGrant = { ...grant, claims: [{ ...secrets, selector: { names: ['other-creds'] } }] };
    expect(rules({ ...bound, 'secrets.': [obj('sb1-creds')] }, [named])).toEqual([roleRule]);
  });

  it('claims nothing for a grant without claims or without a kind', () => {
    expect(rules({ ...bound, 'secrets.': [obj('sb1-creds')] }, [{ ...grant, claims: [] }])).toEqual([roleRule]);
    expect(rules({ ...bound, 'secrets.': [obj('sb1-creds')] }, [{ ...grant, kind: undefined }])).toEqual([roleRule]);
  });

  it('reads every object of the claimed resources with --claimed-access=Namespace', () => {
    expect(rules({}, [grant], 'Namespace')).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
      roleRule,
    ]);
  });

  it('lets consumer-owned claims create and manage only the objects marked Consumer', () => {
    const up: ExportGrant = { ...grant, claims: [{ group: '', resource: 'configmaps', version: 'v1', selector: { owner: 'Consumer' } }] };
    const r = rules(
      { 'configmaps.': [obj('mine', { annotations: { 'klutch.anynines.com/resource-owner': 'Consumer' } }), obj('operator-config')] },
      [up],
    );
    expect(r).toEqual([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['mine'], verbs: ['get', 'update', 'patch', 'delete'] },
      roleRule,
    ]);
  });
});
