import { describe, expect, it } from 'vitest';
import { wireClaim } from '../exports/bind-api';
import { bindingObject } from './binding';

describe('the APIServiceBinding', () => {
  it('has the shape Klutch’s konnector reads: <resource>.<group>, the Secret reference with key kubeconfig, the answered claims', () => {
    const claim = wireClaim({ group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' } });
    expect(
      JSON.parse(
        JSON.stringify(bindingObject('servicebindings.anynines.com', 'klutch-bind', 'kubeconfig-x7k2p', [{ ...claim, state: 'Accepted' }])),
      ),
    ).toEqual({
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceBinding',
      metadata: { name: 'servicebindings.anynines.com', namespace: 'klutch-bind' },
      spec: {
        kubeconfigSecretRef: { name: 'kubeconfig-x7k2p', namespace: 'klutch-bind', key: 'kubeconfig' },
        permissionClaims: [
          {
            resource: 'secrets',
            version: 'v1',
            selector: { owner: 'Provider', names: ['*'], namespaces: ['*'] },
            required: false,
            onConflict: { recreateWhenConsumerSideDeleted: true },
            read: {},
            state: 'Accepted',
          },
        ],
      },
    });
    expect(bindingObject('postgresqlinstances.anynines.com', 'ns', 's', []).spec).toEqual({
      kubeconfigSecretRef: { name: 's', namespace: 'ns', key: 'kubeconfig' },
    });
  });
});
