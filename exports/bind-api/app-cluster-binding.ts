/**
 * AppClusterBinding (newer Klutch, on the control plane): binds APIs for an app cluster reachable through a
 * kubeconfig, optionally deploying the konnector there.
 */
import { crdManifest, type CrdProps } from '../../lib/crd-manifest';
import { s } from '../../lib/schema';
import {
  ageColumn,
  conditionColumn,
  groupResourceProperties,
  kubeconfigSecretRefSchema,
  objectSchema,
  type GroupResource,
  type KubeconfigSecretRef,
  type KubeObject,
} from './common';
import { conditionsSchema, READY_CONDITION, type Condition } from './conditions';
import { BIND_API_VERSION, BIND_CATEGORY, BIND_GROUP, BIND_VERSION, Kinds } from './constants';
import { containerOverridesSchema, type ContainerOverrides } from './container';

export interface KonnectorSpec {
  /** Whether to deploy the konnector to the app cluster. */
  deploy?: boolean;
  overrides?: ContainerOverrides;
}

export interface AppClusterBindingSpec {
  apiExports?: GroupResource[];
  konnector?: KonnectorSpec;
  /** Immutable. */
  kubeconfigSecretRef: KubeconfigSecretRef;
}

export interface AppClusterBindingStatus {
  conditions?: Condition[];
  /** Ours: the binding root namespace the controller chose, kept once chosen (Klutch derives it on every look). */
  rootNamespace?: string;
}

export type AppClusterBinding = KubeObject<
  typeof BIND_API_VERSION,
  typeof Kinds.AppClusterBinding,
  AppClusterBindingSpec,
  AppClusterBindingStatus
>;

export const appClusterBindingSchema = objectSchema({
  description: 'Binds APIs for an app cluster.',
  spec: s.object(
    {
      apiExports: s.array(s.object(groupResourceProperties, { description: 'An API to bind.', required: ['resource'] }), {
        description: 'APIs to bind.',
      }),
      konnector: s.object(
        { deploy: s.boolean({ description: 'Deploy the konnector to the app cluster.' }), overrides: containerOverridesSchema },
        { description: 'The konnector on the app cluster.' },
      ),
      kubeconfigSecretRef: kubeconfigSecretRefSchema,
    },
    { description: 'The app cluster and its APIs.', required: ['kubeconfigSecretRef'] },
  ),
  status: s.object(
    {
      conditions: conditionsSchema,
      rootNamespace: s.string({ description: 'The binding root namespace on the control plane, chosen once (klutch-kit).' }),
    },
    { description: 'Observed state.' },
  ),
  rules: [{ rule: 'self.metadata.name == oldSelf.metadata.name', message: 'name is immutable' }],
});

const appClusterBindingCrdProps: CrdProps = {
  group: BIND_GROUP,
  kind: Kinds.AppClusterBinding,
  categories: [BIND_CATEGORY],
  scope: 'Namespaced',
  versions: [
    {
      name: BIND_VERSION,
      schema: appClusterBindingSchema,
      statusSubresource: true,
      printerColumns: [conditionColumn('Ready', READY_CONDITION), ageColumn],
    },
  ],
};

export function appClusterBindingCrd(): Record<string, unknown> {
  return crdManifest(appClusterBindingCrdProps);
}
