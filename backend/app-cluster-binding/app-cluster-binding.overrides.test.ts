import { describe, expect, it } from 'vitest';
import type { ContainerOverrides } from '../../exports/bind-api/container';
import {
  imageAllowed,
  imagePatternProblem,
  KONNECTOR_RESOURCES,
  vetOverrides,
  type KonnectorPolicy,
} from './app-cluster-binding.overrides';
import { imageRepository } from '../../lib/image-reference';

const images: KonnectorPolicy = {
  image: 'ghcr.io/klutch-kit/konnector:v0.1.0',
  allowed: ['public.ecr.aws/w5n9a2g2/klutch/konnector:*', 'registry.example.com/konnector:v2'],
};
const problems = (o: ContainerOverrides): string[] => {
  const v = vetOverrides(o, images);
  return 'problems' in v ? v.problems : [];
};

describe('spec.konnector.overrides', () => {
  it('takes what an operator of a konnector tunes: allowed image, pull policy, resources, vetted env and flags', () => {
    const o: ContainerOverrides = {
      name: 'ignored',
      image: 'public.ecr.aws/w5n9a2g2/klutch/konnector:v1.4.0',
      imagePullPolicy: 'IfNotPresent',
      resources: { limits: { memory: '512Mi' } },
      env: [
        { name: 'NODE_OPTIONS', value: '--max-old-space-size=400 --max-semi-space-size=4' },
        { name: 'MALLOC_ARENA_MAX', value: '2' },
      ],
      args: ['--workers=4', '--kube-api-qps=50', '--kube-api-burst=100', '-v=4', '--heartbeat-interval=1m'],
    };
    expect(vetOverrides(o, images)).toEqual({
      image: o.image,
      imagePullPolicy: 'IfNotPresent',
      // The override's keys replace the konnector's own, the rest stay: a limit of memory keeps the limit of CPU.
      resources: { requests: KONNECTOR_RESOURCES.requests, limits: { cpu: '1', memory: '512Mi' } },
      env: o.env,
      args: o.args,
    });
    const plain = { image: images.image, resources: KONNECTOR_RESOURCES, env: [], args: [] };
    expect(vetOverrides(undefined, images)).toEqual(plain);
    // Klutch's rule: an empty field is no override.
    expect(vetOverrides({ command: [], lifecycle: {}, image: '', resources: {} }, images)).toEqual(plain);
  });

  it.each<[string, ContainerOverrides, string]>([
    ['command', { command: ['/bin/sh', '-c', 'cat /var/run/secrets/*'] }, 'spec.konnector.overrides.command may not be set'],
    ['envFrom', { envFrom: [{ secretRef: { name: 'app-cluster-kubeconfig' } }] }, 'spec.konnector.overrides.envFrom may not be set'],
    ['lifecycle', { lifecycle: { postStart: { exec: { command: ['sh'] } } } }, 'spec.konnector.overrides.lifecycle may not be set'],
    ['a probe', { livenessProbe: { exec: { command: ['sh'] } } }, 'spec.konnector.overrides.livenessProbe may not be set'],
    ['securityContext', { securityContext: { runAsUser: 0 } }, 'spec.konnector.overrides.securityContext may not be set'],
    ['volumeMounts', { volumeMounts: [{ name: 'x', mountPath: '/x' }] }, 'spec.konnector.overrides.volumeMounts may not be set'],
    ['workingDir', { workingDir: '/tmp' }, 'spec.konnector.overrides.workingDir may not be set'],
    [
      'an image outside the list',
      { image: 'evil.example.com/konnector:v1' },
      'spec.konnector.overrides.image "evil.example.com/konnector:v1" is not an image the platform operator allows',
    ],
    [
      'a look-alike repository',
      { image: 'public.ecr.aws/w5n9a2g2/klutch/konnector-evil:v1' },
      'is not an image the platform operator allows',
    ],
    ['another tag of an exact entry', { image: 'registry.example.com/konnector:v3' }, 'is not an image the platform operator allows'],
    [
      'NODE_OPTIONS loading code',
      { env: [{ name: 'NODE_OPTIONS', value: '--require /tmp/x.js' }] },
      'env[0] (NODE_OPTIONS) "--require /tmp/x.js" holds --require /tmp/x.js',
    ],
    ['TLS off', { env: [{ name: 'NODE_TLS_REJECT_UNAUTHORIZED', value: '0' }] }, 'env[0] (NODE_TLS_REJECT_UNAUTHORIZED) may not be set'],
    ["the Pod's name", { env: [{ name: 'POD_NAME', value: 'forged' }] }, 'env[0] (POD_NAME) may not be set'],
    [
      'a variable from a Secret',
      { env: [{ name: 'MALLOC_ARENA_MAX', valueFrom: { secretKeyRef: { name: 'kubeconfig', key: 'kubeconfig' } } }] },
      'env[0] (MALLOC_ARENA_MAX) needs a plain value',
    ],
    ['another kubeconfig', { args: ['--kubeconfig=/tmp/k'] }, 'args[0] "--kubeconfig=/tmp/k" is not one of --workers=…'],
    [
      "another team's namespace",
      { args: ['--binding-root-namespace=klutch-bind-victim'] },
      'args[0] "--binding-root-namespace=klutch-bind-victim" is not one of',
    ],
    ['a value apart from its flag', { args: ['--workers', '4'] }, 'args[0] "--workers" is not one of'],
    ['a bad value', { args: ['--workers=many'] }, 'args[0] "--workers=many": "many" is not a whole number'],
    ['-v with --log-level', { args: ['-v=4', '--log-level=debug'] }, 'args: -v and --log-level: give one'],
    ['a burst without a rate', { args: ['--kube-api-burst=10'] }, 'args: --kube-api-burst only with --kube-api-qps above 0'],
    // Every konnector of the control plane writes its Lease to the same etcd: not a thousand times a second.
    [
      'a Lease renewed each millisecond',
      { args: ['--retry-period=1ms'] },
      'args[0] "--retry-period=1ms": "1ms" is not a Go duration of 1s or more',
    ],
    ['a heartbeat each second', { args: ['--heartbeat-interval=1s'] }, '"1s" is not a Go duration of 30s or more'],
    ['a thousand connections', { args: ['--connections=1000'] }, '"1000" is not a whole number from 1 to 128'],
    [
      'a renew deadline past the lease (two leaders)',
      { args: ['--renew-deadline=20s'] },
      'args: --lease-duration (15s) must be longer than --renew-deadline (20s)',
    ],
    [
      'a retry period the renew deadline cannot hold',
      { args: ['--lease-duration=40s', '--renew-deadline=30s', '--retry-period=30s'] },
      'args: --renew-deadline (30s) must be longer than 1.2 times --retry-period (30s)',
    ],
  ])('refuses %s, naming the field and the fix', (_what, o, message) => {
    const p = problems(o);
    expect(p.join('\n')).toContain(message);
    expect(p.every((x) => x.startsWith('spec.konnector.overrides.') && /remove|change|write|ask/.test(x))).toBe(true);
  });

  it.each<[string, ContainerOverrides['resources'], string]>([
    [
      'more memory than the ceiling',
      { limits: { memory: '64Gi' } },
      `resources.limits.memory "64Gi" is more than the platform operator lets a konnector have (1Gi, the backend's --konnector-max-resources); lower it, or ask the operator`,
    ],
    [
      'a request above the ceiling',
      { requests: { cpu: '3' }, limits: { cpu: '3' } },
      'resources.requests.cpu "3" is more than the platform operator',
    ],
    [
      'a GPU',
      { limits: { 'nvidia.com/gpu': '1' } },
      'resources.limits.nvidia.com/gpu may not be set: a konnector is given only cpu, memory, ephemeral-storage',
    ],
    ['hugepages', { requests: { 'hugepages-2Mi': '1Gi' } }, 'resources.requests.hugepages-2Mi may not be set'],
    [
      'a claim of a device',
      { claims: [{ name: 'gpu' }] },
      'resources.claims may not be set: only requests and limits are tuned; remove it',
    ],
    ['a word', { limits: { memory: 'lots' } }, 'resources.limits.memory "lots" is not a quantity'],
    ['a negative quantity', { limits: { cpu: '-1' } }, 'resources.limits.cpu "-1" is not a quantity of zero or more'],
    [
      'a binary suffix on a fraction',
      { limits: { memory: '0.5Gi' } },
      'resources.limits.memory "0.5Gi" is not a quantity this platform reads: write it as a whole number of its unit (1536Mi, 500m)',
    ],
    [
      "a request above the konnector's own limit",
      { requests: { memory: '512Mi' } },
      `resources.requests.memory "512Mi" is more than its limit (384Mi, the konnector's own); raise spec.konnector.overrides.resources.limits.memory or lower the request`,
    ],
    [
      'a request above its own limit',
      { requests: { cpu: '1500m' }, limits: { cpu: '500m' } },
      'resources.requests.cpu "1500m" is more than its limit (500m)',
    ],
  ])('refuses %s among the resources, naming the field and the fix', (_what, resources, message) => {
    const p = problems({ resources });
    expect(p.join('\n')).toContain(`spec.konnector.overrides.${message}`);
    expect(p.every((x) => x.startsWith('spec.konnector.overrides.resources.') && /remove|lower|raise|write/.test(x))).toBe(true);
  });

  it("holds resources to the operator's ceiling, whichever it is", () => {
    const roomy = { ...images, maxResources: { cpu: '8', memory: '64Gi' } };
    expect(vetOverrides({ resources: { limits: { memory: '64Gi' } } }, roomy)).toMatchObject({ resources: { limits: { memory: '64Gi' } } });
    const tight = { ...images, maxResources: { cpu: '100m' } };
    // The konnector's own limit of CPU (1) is above this ceiling: the ceiling bounds it too.
    expect(vetOverrides(undefined, tight)).toMatchObject({
      resources: { requests: { cpu: '50m' }, limits: { cpu: '100m', memory: '384Mi' } },
    });
    expect(problems({ resources: { limits: { cpu: '200m' } } })).toEqual([]);
    const refused = vetOverrides({ resources: { limits: { cpu: '200m' } } }, tight);
    expect('problems' in refused && refused.problems.join()).toContain(
      'resources.limits.cpu "200m" is more than the platform operator lets a konnector have (100m',
    );
  });

  it('names every problem at once', () => {
    expect(problems({ command: ['sh'], image: 'evil.example.com/x:1', args: ['--identity=x'] })).toHaveLength(3);
  });
});

describe('konnector images', () => {
  it.each([
    ['ghcr.io/klutch-kit/konnector:v0.1.0', 'ghcr.io/klutch-kit/konnector'],
    ['registry:5000/a/b:tag', 'registry:5000/a/b'],
    ['registry:5000/a/b', 'registry:5000/a/b'],
    [`a/b:v1@sha256:${'0'.repeat(64)}`, 'a/b'],
    ['a/b@sha256:short', undefined],
    ['A/B:v1', undefined],
    ['a/b:-bad', undefined],
  ])('%s is of repository %s', (image, repo) => expect(imageRepository(image)).toBe(repo));

  it('allows --konnector-image, exact entries and any tag or digest of a <repository>:* entry', () => {
    expect(imageAllowed(images.image, images)).toBe(true);
    expect(imageAllowed('public.ecr.aws/w5n9a2g2/klutch/konnector:v1.5.0', images)).toBe(true);
    expect(imageAllowed(`public.ecr.aws/w5n9a2g2/klutch/konnector@sha256:${'a'.repeat(64)}`, images)).toBe(true);
    expect(imageAllowed('registry.example.com/konnector:v2', images)).toBe(true);
    expect(imageAllowed('ghcr.io/klutch-kit/konnector:v0.2.0', images)).toBe(false);
  });

  it.each([
    ['a/b:*', undefined],
    ['a/b:v1', undefined],
    ['a/b*', '"a/b*" is neither an image reference nor <repository>:*'],
    ['*', '"*" is neither an image reference nor <repository>:*'],
    ['a/b:v1:*', '"a/b:v1:*" is neither an image reference nor <repository>:*'],
  ])('reads the allowlist entry %s', (p, problem) => expect(imagePatternProblem(p)).toBe(problem));
});
