import { describe, expect, it } from 'vitest';
import { podTable } from './pods';

describe('podTable', () => {
  it('prints one aligned line per Pod, as kubectl get pods -A does', () => {
    const pod = (name: string, ready: boolean, restarts: number, phase: string, deleting = false) => ({
      metadata: { namespace: 'crossplane-system', name, ...(deleting ? { deletionTimestamp: 'x' } : {}) },
      spec: { containers: [{ image: 'r:5000/crossplane/crossplane:v2.4.0' }] },
      status: { phase, containerStatuses: [{ ready, restartCount: restarts }] },
    });
    expect(podTable([pod('crossplane-1', true, 0, 'Running'), pod('fn', false, 3, 'Running', true)]).split('\n')).toEqual([
      'NAMESPACE          NAME          READY  STATUS       RESTARTS  IMAGE',
      'crossplane-system  crossplane-1  1/1    Running      0         r:5000/crossplane/crossplane:v2.4.0',
      'crossplane-system  fn            0/1    Terminating  3         r:5000/crossplane/crossplane:v2.4.0',
    ]);
  });
});
