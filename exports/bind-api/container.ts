/**
 * The core/v1 Container schema (Kubernetes 1.32, as controller-gen emits it) that AppClusterBinding uses for
 * konnector overrides. Written once here so the kind module stays readable; the fields follow corev1.Container,
 * whose documentation applies, except that `name` is optional.
 */
import type { V1Container } from '@kubernetes/client-node';
import { s, type Schema } from '../../lib/schema';

/** Overrides for the konnector container: the corev1.Container fields the schema keeps. */
export type ContainerOverrides = Partial<
  Pick<
    V1Container,
    | 'args'
    | 'command'
    | 'env'
    | 'envFrom'
    | 'image'
    | 'imagePullPolicy'
    | 'lifecycle'
    | 'livenessProbe'
    | 'name'
    | 'ports'
    | 'readinessProbe'
    | 'resources'
    | 'restartPolicy'
    | 'securityContext'
    | 'startupProbe'
    | 'stdin'
    | 'stdinOnce'
    | 'terminationMessagePath'
    | 'terminationMessagePolicy'
    | 'tty'
    | 'volumeDevices'
    | 'volumeMounts'
    | 'workingDir'
  >
>;

const QUANTITY_PATTERN = String.raw`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`;

const str = (): Schema => s.string();
const bool = (): Schema => s.boolean();
const int32 = (): Schema => s.integer({ format: 'int32' });
const int64 = (): Schema => s.integer({ format: 'int64' });
const atomicStrings = (): Schema => s.array(s.string(), { listType: 'atomic' });
const quantity = (): Schema => s.intOrString({ pattern: QUANTITY_PATTERN });

/** A reference to one key of a ConfigMap or Secret. */
const keyRef = s.object({ key: str(), name: s.string({ default: '' }), optional: bool() }, { required: ['key'], mapType: 'atomic' });
/** A reference to a whole ConfigMap or Secret. */
const sourceRef = s.object({ name: s.string({ default: '' }), optional: bool() }, { mapType: 'atomic' });

const env = s.array(
  s.object(
    {
      name: str(),
      value: str(),
      valueFrom: s.object({
        configMapKeyRef: keyRef,
        fieldRef: s.object({ apiVersion: str(), fieldPath: str() }, { required: ['fieldPath'], mapType: 'atomic' }),
        resourceFieldRef: s.object(
          { containerName: str(), divisor: quantity(), resource: str() },
          { required: ['resource'], mapType: 'atomic' },
        ),
        secretKeyRef: keyRef,
      }),
    },
    { required: ['name'] },
  ),
  { description: 'Environment variables.' },
);

const envFrom = s.array(s.object({ configMapRef: sourceRef, prefix: str(), secretRef: sourceRef }), {
  description: 'Sources of environment variables.',
  listType: 'atomic',
});

const port = (): Schema => s.intOrString();
const exec = s.object({ command: atomicStrings() });
const httpGet = s.object(
  {
    host: str(),
    httpHeaders: s.array(s.object({ name: str(), value: str() }, { required: ['name', 'value'] }), { listType: 'atomic' }),
    path: str(),
    port: port(),
    scheme: str(),
  },
  { required: ['port'] },
);
const tcpSocket = s.object({ host: str(), port: port() }, { required: ['port'] });

const handler = s.object({ exec, httpGet, sleep: s.object({ seconds: int64() }, { required: ['seconds'] }), tcpSocket });
const lifecycle = s.object({ postStart: handler, preStop: handler }, { description: 'Lifecycle hooks.' });

const probe = (description: string): Schema =>
  s.object(
    {
      exec,
      failureThreshold: int32(),
      grpc: s.object({ port: int32(), service: s.string({ default: '' }) }, { required: ['port'] }),
      httpGet,
      initialDelaySeconds: int32(),
      periodSeconds: int32(),
      successThreshold: int32(),
      tcpSocket,
      terminationGracePeriodSeconds: int64(),
      timeoutSeconds: int32(),
    },
    { description },
  );

const ports = s.array(
  s.object(
    { containerPort: int32(), hostIP: str(), hostPort: int32(), name: str(), protocol: s.string({ default: 'TCP' }) },
    { required: ['containerPort'] },
  ),
  { description: 'Ports exposed by the container.', listType: 'map', listMapKeys: ['containerPort', 'protocol'] },
);

const resources = s.object(
  {
    claims: s.array(s.object({ name: str(), request: str() }, { required: ['name'] }), { listType: 'map', listMapKeys: ['name'] }),
    limits: s.map(quantity()),
    requests: s.map(quantity()),
  },
  { description: 'Compute resources.' },
);

const profile = (): Schema => s.object({ localhostProfile: str(), type: str() }, { required: ['type'] });
const securityContext = s.object(
  {
    allowPrivilegeEscalation: bool(),
    appArmorProfile: profile(),
    capabilities: s.object({ add: atomicStrings(), drop: atomicStrings() }),
    privileged: bool(),
    procMount: str(),
    readOnlyRootFilesystem: bool(),
    runAsGroup: int64(),
    runAsNonRoot: bool(),
    runAsUser: int64(),
    seLinuxOptions: s.object({ level: str(), role: str(), type: str(), user: str() }),
    seccompProfile: profile(),
    windowsOptions: s.object({ gmsaCredentialSpec: str(), gmsaCredentialSpecName: str(), hostProcess: bool(), runAsUserName: str() }),
  },
  { description: 'Security options.' },
);

const volumeDevices = s.array(s.object({ devicePath: str(), name: str() }, { required: ['devicePath', 'name'] }), {
  description: 'Block devices.',
});
const volumeMounts = s.array(
  s.object(
    {
      mountPath: str(),
      mountPropagation: str(),
      name: str(),
      readOnly: bool(),
      recursiveReadOnly: str(),
      subPath: str(),
      subPathExpr: str(),
    },
    { required: ['mountPath', 'name'] },
  ),
  { description: 'Volumes mounted into the container.' },
);

export const containerOverridesSchema = s.object(
  {
    args: atomicStrings().describe('Arguments to the entrypoint.'),
    command: atomicStrings().describe('Entrypoint.'),
    env,
    envFrom,
    image: s.string({ description: 'Container image.' }),
    imagePullPolicy: s.string({ description: 'Always, Never or IfNotPresent.' }),
    lifecycle,
    livenessProbe: probe('Liveness probe.'),
    name: s.string({ description: 'Container name.' }),
    ports,
    readinessProbe: probe('Readiness probe.'),
    resources,
    restartPolicy: s.string({ description: 'Restart policy of an init container.' }),
    securityContext,
    startupProbe: probe('Startup probe.'),
    stdin: bool(),
    stdinOnce: bool(),
    terminationMessagePath: str(),
    terminationMessagePolicy: str(),
    tty: bool(),
    volumeDevices,
    volumeMounts,
    workingDir: s.string({ description: 'Working directory.' }),
  },
  { description: 'Overrides of the konnector container (corev1.Container fields).' },
);
