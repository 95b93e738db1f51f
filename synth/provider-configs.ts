/**
 * The provider side the Compositions name but do not make: a ProviderConfig per name a recipe uses
 * (`<service>-service-broker` and `<service>-backup-manager` for provider-anynines, `kubernetes-provider` for
 * provider-kubernetes), and provider-kubernetes itself with the runtime Klutch gives it (a DeploymentRuntimeConfig
 * naming its ServiceAccount `provider-kubernetes`, and that ServiceAccount's rights in the cluster).
 *
 * The names come from the recipes, not from a list here: a fixed `providerConfig.name`, or a `format` over
 * `fromFieldPath` expanded over that field's enum in the API's schema, so a data service added to the catalog brings
 * its ProviderConfigs along. Where Klutch binds provider-kubernetes to cluster-admin, ours gets a ClusterRole over the
 * kinds the recipes wrap in Objects (and the Secrets their connection details come from), nothing else.
 */
import { ApiObject } from 'cdk8s';
import * as kplus from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import type { Api, CrossplaneTarget } from '../apis/api';
import type { JSONSchemaProps } from '../lib/schema';
import { Names } from '../lib/names';
import type { Recipe } from '../recipe/recipe';
import { FUNCTION_POD, RUNTIME_CONTAINER } from '../functions/dataservices/deploy/function-runtime';
import { groupOf, type KindRef } from './resource-names';

/** The provider-kubernetes package the bundle installs (the version the tests build and run). */
const PROVIDER_KUBERNETES_PACKAGE = 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1';
/**
 * Its arguments (the runtime container's, Crossplane's `package-runtime`): `--enable-watches`, so an Object with
 * `spec.watch: true` (every one our recipes compose, backends/kubernetes-object.ts) sees its wrapped object's status
 * within a second instead of on a 30 s poll (docs/decisions/readiness-lag.md); `--sanitize-secrets`, so an Object
 * that holds a Secret (a cnpg binding's) shows its data redacted in `status.atProvider.manifest`: Objects are readable
 * with `crossplane-view`, which grants no Secrets (connection details are read from the Secret itself, not from
 * there). The test harness runs the same.
 */
export const PROVIDER_KUBERNETES_ARGS = ['--enable-watches', '--sanitize-secrets'] as const;
/** Its ServiceAccount, named by the DeploymentRuntimeConfig as Klutch's kustomization does. */
const PROVIDER_KUBERNETES_SA = 'provider-kubernetes';

/** Its ClusterRole (and binding): the kinds the recipes wrap in Objects. */
const PROVIDER_KUBERNETES_ROLE = 'klutch-kit-provider-kubernetes';

/** One ProviderConfig a Composition names. */
export interface ProviderConfigRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** The managed resource kind it configures (`ServiceInstance`, `Backup`, or the a8s kind an Object wraps). */
  readonly for: { readonly apiVersion: string; readonly kind: string };
}

/** Every ProviderConfig the catalog's recipes name on `target`, sorted by kind and name, each once. */
export function providerConfigRefs(apis: readonly Api[], target: CrossplaneTarget = 'v1'): ProviderConfigRef[] {
  const refs = new Map<string, ProviderConfigRef>();
  for (const api of apis) {
    for (const recipe of Object.values(api.backends) as Recipe[]) {
      const wrapper = target === 'v2' ? (recipe.v2?.wrapper ?? recipe.wrapper) : recipe.wrapper;
      const selector = (target === 'v2' ? recipe.v2?.providerConfig : undefined) ?? recipe.providerConfig;
      // A wrapped resource is configured by the wrapper's provider (provider-kubernetes), in the wrapper's group.
      const group = (wrapper ?? recipe.resource).apiVersion.split('/')[0]!;
      const kind = selector.kind ?? 'ProviderConfig';
      const apiVersion = `${group}/${group.startsWith('kubernetes.') ? 'v1alpha1' : 'v1'}`;
      for (const name of providerConfigNames(api, selector)) {
        refs.set(`${apiVersion}/${kind}/${name}`, { apiVersion, kind, name, for: recipe.resource });
      }
      // A wrapped managed resource (v2: provider-anynines' inside a namespaced Object) names its own provider's too.
      const inner = wrapper?.manifestProviderConfig;
      if (inner) {
        const g = recipe.resource.apiVersion.split('/')[0]!;
        const v = `${g}/${g.startsWith('kubernetes.') ? 'v1alpha1' : 'v1'}`;
        const k = inner.kind ?? 'ProviderConfig';
        for (const name of providerConfigNames(api, inner))
          refs.set(`${v}/${k}/${name}`, { apiVersion: v, kind: k, name, for: recipe.resource });
      }
    }
  }
  return [...refs.values()].sort((a, b) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`));
}

function providerConfigNames(api: Api, s: Recipe['providerConfig']): string[] {
  if (s.name) return [s.name];
  const path = s.fromFieldPath ?? '';
  const field = path
    .replace(/^spec\./, '')
    .split('.')
    .reduce<JSONSchemaProps | undefined>((schema, key) => schema?.properties?.[key], api.spec.toJSON());
  if (!field?.enum?.length) {
    throw new Error(
      `API ${api.name}: providerConfig.fromFieldPath ${path} has no enum in the API's schema, so the ProviderConfigs it names cannot be known at synth; give the field an enum or use providerConfig.name`,
    );
  }
  return field.enum.map((v) => (s.format ?? '%s').replace('%s', String(v)));
}

export interface ProviderConfigsProps {
  readonly refs: readonly ProviderConfigRef[];
  /** Where provider-anynines reads each broker's credentials Secret (`<config name>-credentials`). @default crossplane-system */
  readonly credentialsNamespace?: string;
}

/**
 * The ProviderConfigs: provider-kubernetes' with the identity Crossplane injects (its ServiceAccount), each
 * provider-anynines one with a placeholder URL (`https://<name>.example.com`, patched per installation) and its
 * credentials from Secret `<name>-credentials` (keys `username`, `password`).
 */
export class ProviderConfigs extends Construct {
  constructor(scope: Construct, id: string, props: ProviderConfigsProps) {
    super(scope, id);
    const ns = props.credentialsNamespace ?? 'crossplane-system';
    for (const ref of props.refs) {
      const spec = ref.apiVersion.startsWith('kubernetes.')
        ? { credentials: { source: 'InjectedIdentity' } }
        : {
            url: `https://${ref.name}.example.com`,
            // provider-anynines' two kinds of endpoint: the service broker, and the backup manager for Backup/Restore.
            serviceType: /^(Backup|Restore)$/.test(ref.for.kind) ? 'backupmanager' : 'servicebroker',
            providerCredentials: {
              source: 'Secret',
              username: { secretRef: { namespace: ns, name: `${ref.name}-credentials`, key: 'username' } },
              password: { secretRef: { namespace: ns, name: `${ref.name}-credentials`, key: 'password' } },
            },
          };
      new ApiObject(this, `${ref.kind}-${ref.name}`, { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name }, spec });
    }
  }
}

/**
 * The kinds a recipe's wrapper reads through `spec.references[i].patchesFrom` (its `apiVersion` and `kind` set as
 * constants): provider-kubernetes gets each of them to resolve the reference, so its role must allow reading them.
 */
export function referencedKinds(recipe: Recipe): { apiVersion: string; kind: string }[] {
  const fields = [...(recipe.wrapper?.fields ?? []), ...(recipe.v2?.wrapper?.fields ?? [])];
  const value = (to: string) => fields.find((f) => f.to === to)?.value;
  const out: { apiVersion: string; kind: string }[] = [];
  for (const f of fields) {
    const m = /^(spec\.references\[\d+\]\.patchesFrom)\.kind$/.exec(f.to);
    if (!m || typeof f.value !== 'string') continue;
    out.push({ apiVersion: String(value(`${m[1]}.apiVersion`) ?? 'v1'), kind: f.value });
  }
  return out;
}

export interface ProviderKubernetesProps {
  /** The kinds its Objects manage (what the recipes wrap). */
  readonly manages: readonly { readonly apiVersion: string; readonly kind: string }[];
  /** Kinds its Objects only read, through `spec.references[].patchesFrom` (referencedKinds). @default none */
  readonly reads?: readonly { readonly apiVersion: string; readonly kind: string }[];
  /** The RBAC resource name of a kind, from its CRD (synth/resource-names.ts). */
  readonly resourceOf: (k: KindRef) => string;
  /** @default PROVIDER_KUBERNETES_PACKAGE */
  readonly package?: string;
  /** Crossplane's namespace, where the provider's Pod runs. @default crossplane-system */
  readonly namespace?: string;
}

/**
 * provider-kubernetes as Klutch installs it: the Provider with a DeploymentRuntimeConfig that names its ServiceAccount
 * `provider-kubernetes` (so RBAC can name it before the Pod exists); then what that identity may do in the control
 * plane: the kinds the recipes wrap in Objects and reading Secrets (connection details), instead of Klutch's cluster-admin.
 */
export class ProviderKubernetes extends Construct {
  constructor(scope: Construct, id: string, props: ProviderKubernetesProps) {
    super(scope, id);
    const pkg = props.package ?? PROVIDER_KUBERNETES_PACKAGE;
    const name = Names.packageName(pkg);
    const namespace = props.namespace ?? 'crossplane-system';
    new ApiObject(this, 'RuntimeConfig', {
      apiVersion: 'pkg.crossplane.io/v1beta1',
      kind: 'DeploymentRuntimeConfig',
      metadata: { name },
      // `selector` and `template` are required by the CRD; Crossplane fills them in.
      spec: {
        deploymentTemplate: {
          spec: {
            selector: {},
            // Restricted like our function's runtime (its image's user is 65532 too), but with its token: it calls the API.
            template: {
              spec: {
                automountServiceAccountToken: true,
                securityContext: FUNCTION_POD.securityContext,
                containers: [
                  {
                    name: RUNTIME_CONTAINER,
                    securityContext: FUNCTION_POD.containers[0]!.securityContext,
                    args: [...PROVIDER_KUBERNETES_ARGS],
                  },
                ],
              },
            },
          },
        },
        serviceAccountTemplate: { metadata: { name: PROVIDER_KUBERNETES_SA } },
      },
    });
    new ApiObject(this, 'Provider', {
      apiVersion: 'pkg.crossplane.io/v1',
      kind: 'Provider',
      metadata: { name },
      spec: { package: pkg, runtimeConfigRef: { apiVersion: 'pkg.crossplane.io/v1beta1', kind: 'DeploymentRuntimeConfig', name } },
    });
    const labels = { 'app.kubernetes.io/name': 'provider-kubernetes', 'app.kubernetes.io/part-of': 'klutch-kit' };
    const role = new kplus.ClusterRole(this, 'ClusterRole', { metadata: { name: PROVIDER_KUBERNETES_ROLE, labels } });
    const byGroup = resourcesByGroup(props.manages, props.resourceOf);
    allowByGroup(role, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], byGroup);
    // Connection details come from Secrets the wrapped objects write (unless a recipe wraps Secrets themselves).
    if (!byGroup.get('')?.has('secrets')) role.allow(['get', 'list', 'watch'], kplus.ApiResource.SECRETS);
    // What an Object copies from (a Service's load-balancer address into a binding's Secret): read only.
    // Only what the rules above do not already grant.
    const reads = resourcesByGroup(props.reads ?? [], props.resourceOf);
    for (const [group, resources] of reads)
      for (const r of resources) if (byGroup.get(group)?.has(r) || (group === '' && r === 'secrets')) resources.delete(r);
    allowByGroup(role, ['get', 'list', 'watch'], reads);
    new kplus.ClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name: PROVIDER_KUBERNETES_ROLE, labels },
      role,
    }).addSubjects(
      kplus.ServiceAccount.fromServiceAccountName(this, 'ServiceAccount', PROVIDER_KUBERNETES_SA, { namespaceName: namespace }),
    );
  }
}

/** RBAC resource names by API group: each kind's group from its apiVersion, its resource name from its CRD. */
function resourcesByGroup(kinds: readonly KindRef[], resourceOf: (k: KindRef) => string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const k of kinds) {
    const group = groupOf(k.apiVersion);
    out.set(group, (out.get(group) ?? new Set()).add(resourceOf(k)));
  }
  return out;
}

/** One rule per API group (sorted, so the output is stable), skipping groups left empty. */
function allowByGroup(role: kplus.ClusterRole, verbs: string[], byGroup: ReadonlyMap<string, ReadonlySet<string>>): void {
  for (const [apiGroup, resources] of [...byGroup].sort(([a], [b]) => a.localeCompare(b))) {
    if (resources.size === 0) continue;
    role.allow(verbs, ...[...resources].sort().map((resourceType) => kplus.ApiResource.custom({ apiGroup, resourceType })));
  }
}
