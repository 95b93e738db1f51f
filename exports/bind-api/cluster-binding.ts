/**
 * ClusterBinding (provider side, the singleton `cluster` in each consumer's cluster namespace): the konnector's
 * heartbeat and version, and the kubeconfig the consumer uses.
 */
import { crdManifest, type CrdProps } from '../../lib/crd-manifest';
import { s } from '../../lib/schema';
import {
  ageColumn,
  conditionColumn,
  localKubeconfigSecretRefSchema,
  objectSchema,
  type KubeObject,
  type LocalKubeconfigSecretRef,
} from './common';
import { conditionsSchema, READY_CONDITION, type Condition } from './conditions';
import { BIND_API_VERSION, BIND_CATEGORY, BIND_GROUP, BIND_VERSION, CLUSTER_BINDING_NAME, Kinds } from './constants';

export interface ClusterBindingSpec {
  /** Immutable. */
  kubeconfigSecretRef: LocalKubeconfigSecretRef;
  providerPrettyName: string;
  /** Free-form; what the provider wants to know about the consumer (region, tier, ...). */
  serviceProviderSpec?: Record<string, unknown>;
}

export interface ClusterBindingStatus {
  /** RFC 3339 time of the konnector's last heartbeat. */
  lastHeartbeatTime?: string;
  /** A Go duration, e.g. "5m0s": heartbeats later than twice this mark the binding unhealthy. */
  heartbeatInterval?: string;
  konnectorVersion?: string;
  conditions?: Condition[];
}

export type ClusterBinding = KubeObject<typeof BIND_API_VERSION, typeof Kinds.ClusterBinding, ClusterBindingSpec, ClusterBindingStatus>;

export const ClusterBindingConditions = {
  SecretValid: 'SecretValid',
  ValidVersion: 'ValidVersion',
  Healthy: 'Healthy',
} as const;

/** Reasons of a False Healthy condition. */
export const HealthyReasons = {
  FirstHeartbeatPending: 'FirstHeartbeatPending',
  HeartbeatIntervalMissing: 'HeartbeatIntervalMissing',
  HeartbeatTimeout: 'HeartbeatTimeout',
  HeartbeatTimeDrift: 'HeartbeatTimeDrift',
} as const;

export const clusterBindingSchema = objectSchema({
  description: 'A bound consumer cluster; a singleton named "cluster".',
  spec: s.object(
    {
      kubeconfigSecretRef: localKubeconfigSecretRefSchema,
      providerPrettyName: s.string({ description: 'Display name of the provider.', minLength: 1 }),
      serviceProviderSpec: s.freeform({ description: 'Provider-specific data about the consumer.' }),
    },
    { description: 'The consumer cluster.', required: ['kubeconfigSecretRef', 'providerPrettyName'] },
  ),
  status: s.object(
    {
      conditions: conditionsSchema,
      heartbeatInterval: s.string({ description: 'Longest promised interval between heartbeats.' }),
      konnectorVersion: s.string({ description: 'Version of the konnector on the consumer.' }),
      lastHeartbeatTime: s.string({ description: 'Time of the last heartbeat.', format: 'date-time' }),
    },
    { description: 'Observed state.' },
  ),
  rules: [{ rule: `self.metadata.name == "${CLUSTER_BINDING_NAME}"`, message: `cluster binding name should be ${CLUSTER_BINDING_NAME}` }],
});

const clusterBindingCrdProps: CrdProps = {
  group: BIND_GROUP,
  kind: Kinds.ClusterBinding,
  categories: [BIND_CATEGORY],
  scope: 'Namespaced',
  versions: [
    {
      name: BIND_VERSION,
      schema: clusterBindingSchema,
      statusSubresource: true,
      printerColumns: [
        { name: 'Konnector Version', type: 'string', jsonPath: '.status.konnectorVersion' },
        { name: 'Last Heartbeat', type: 'date', jsonPath: '.status.lastHeartbeatTime' },
        conditionColumn('Ready', READY_CONDITION),
        ageColumn,
      ],
    },
  ],
};

export function clusterBindingCrd(): Record<string, unknown> {
  return crdManifest(clusterBindingCrdProps);
}
