import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podTrouble } from './konnector-pods';

const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'konnector-7d9f-x2' }, status });

describe("the konnector Pod's trouble, as the plugin reports a binding left without status", () => {
  it.each([
    [
      'an image that cannot be pulled',
      pod({
        phase: 'Pending',
        containerStatuses: [
          {
            name: 'konnector',
            image: 'ghcr.io/klutch-kit/konnector:v0.1.0',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "ghcr.io/klutch-kit/konnector:v0.1.0"' } },
          },
        ],
      }),
      'Pod konnector-7d9f-x2: ImagePullBackOff, Back-off pulling image "ghcr.io/klutch-kit/konnector:v0.1.0"',
    ],
    [
      'a crash loop, with its last exit',
      pod({
        phase: 'Running',
        containerStatuses: [
          {
            name: 'konnector',
            image: 'k',
            imageID: '',
            ready: false,
            restartCount: 4,
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
            lastState: { terminated: { exitCode: 2, reason: 'Error' } },
          },
        ],
      }),
      'Pod konnector-7d9f-x2: CrashLoopBackOff, back-off 40s restarting failed container; it last exited with code 2 (Error)',
    ],
    [
      'no node for it',
      pod({
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient memory.' },
        ],
      }),
      'Pod konnector-7d9f-x2 cannot be scheduled: 0/3 nodes are available: 3 Insufficient memory.',
    ],
    ['a Pod still starting', pod({ phase: 'Pending' }), 'Pod konnector-7d9f-x2 is Pending, not Ready'],
  ])('names %s', (_what, p, said) => {
    expect(podTrouble(p)).toBe(said);
  });

  it('says nothing of a Pod that runs and is Ready', () => {
    expect(podTrouble(pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }))).toBeUndefined();
  });
});
