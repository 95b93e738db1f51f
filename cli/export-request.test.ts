import { describe, expect, it } from 'vitest';
import type { ExportRequestDocument } from '../exports/bind-api';
import { requestObject } from './export-request';

describe('the APIServiceExportRequest', () => {
  it('is the request of the BindingResponse as Klutch hands it out, created in the consumer’s namespace without its status', () => {
    // As Go serializes it: a null creationTimestamp, an empty status.
    const doc = JSON.parse(
      '{"kind":"APIServiceExportRequest","apiVersion":"klutch.anynines.com/v1alpha1","metadata":{"name":"postgresqlinstances.anynines.com","creationTimestamp":null},"spec":{"resources":[{"group":"anynines.com","resource":"postgresqlinstances"}]},"status":{}}',
    ) as ExportRequestDocument;
    expect(requestObject(doc, 'cluster-8xq2z')).toEqual({
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportRequest',
      metadata: { name: 'postgresqlinstances.anynines.com', namespace: 'cluster-8xq2z' },
      spec: { resources: [{ group: 'anynines.com', resource: 'postgresqlinstances' }] },
    });
  });
});
