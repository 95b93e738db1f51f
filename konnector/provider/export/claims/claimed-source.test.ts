import type { V1Role } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { CLAIMED_ROLE } from '../../../../exports/bind-api';
import { sharedNames } from './claimed-source';

const role = (rules: V1Role['rules']): V1Role => ({ metadata: { name: CLAIMED_ROLE, namespace: 'p' }, rules });

describe('sharedNames', () => {
  it('reads the names the Role shares of one core resource, and nothing a rule does not name', () => {
    const r = role([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['db-creds', 'sb-creds'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['db-config'], verbs: ['get', 'list', 'watch'] },
      // Create of consumer-owned objects shares nothing to read.
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['written-only'], verbs: ['update'] },
      { apiGroups: ['other.io'], resources: ['secrets'], resourceNames: ['not-core'], verbs: ['get'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], resourceNames: [CLAIMED_ROLE], verbs: ['get'] },
    ]);
    expect([...sharedNames(r, 'secrets')]).toEqual(['db-creds', 'sb-creds']);
    expect([...sharedNames(r, 'configmaps')]).toEqual(['db-config']);
  });

  it('is empty without a Role, and for a rule without resourceNames (that is namespace-wide access, read as such elsewhere)', () => {
    expect(sharedNames(undefined, 'secrets').size).toBe(0);
    expect(sharedNames(role([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }]), 'secrets').size).toBe(0);
  });
});
