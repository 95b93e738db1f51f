/**
 * `AppClusterRole`: what the kubeconfig of an AppClusterBinding needs in its app cluster — not cluster-admin, which
 * Klutch asks for, but exactly what a konnector in control-plane mode does there: watch namespaces and CRDs, create
 * the bound CRDs and update or delete only those (by name), read and write the bound APIs' objects and status, copy
 * the Secrets/ConfigMaps their claims share down, and record events. The rules are generated from the same checks the
 * backend's AppClusterBinding controller asks as SelfSubjectAccessReviews before it deploys the konnector
 * (lib/app-cluster-access.ts), so the two cannot disagree. synth writes it for the whole catalog to
 * dist/app-cluster/control-plane-konnector/clusterrole.yaml.
 *
 * It makes a ServiceAccount `konnector` in `namespace` (default `klutch-control-plane`) bound to the ClusterRole;
 * the operator puts a token of it (`kubectl create token`, rotated by updating the Secret) or another identity bound
 * to the ClusterRole into the AppClusterBinding's kubeconfig Secret. With claimed Secrets/ConfigMaps comes the same
 * ValidatingAdmissionPolicy as the app-cluster konnector's: whoever holds the role may create, update and delete
 * only its own copies, and never a Secret Kubernetes would fill a token into. The policy follows the role (a
 * permission of it, lib/app-cluster-access.ts `copiesOnlyCheck`), not the ServiceAccount: the backend checks that the
 * kubeconfig holds that permission, so the credential it stores on the control plane is always one the policy holds.
 */
import { ClusterRole, ClusterRoleBinding, Namespace, ServiceAccount, type IApiEndpoint, type IApiResource } from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import { APP_CLUSTER_ROLE, boundApiChecks, CONTROL_PLANE_KONNECTOR_BASE, rulesFor, type BoundApi } from '../../lib/app-cluster-access';
import { RESTRICTED_NAMESPACE_LABELS } from '../../lib/pod-security';
import { copiesOnly, deletionProtection } from './access';

export interface AppClusterRoleProps {
  /** The APIs AppClusterBindings may bind into the app cluster (group, plural, claimed core resources). */
  readonly apis: readonly BoundApi[];
  /** Namespace of the ServiceAccount `konnector`. @default klutch-control-plane */
  readonly namespace?: string;
  /** Create the Namespace object. @default true */
  readonly createNamespace?: boolean;
}

const endpoint = (r: IApiResource): IApiEndpoint => ({ asApiResource: () => r, asNonApiResource: () => undefined });

export class AppClusterRole extends Construct {
  readonly role: ClusterRole;
  readonly serviceAccount: ServiceAccount;

  constructor(scope: Construct, id: string, props: AppClusterRoleProps) {
    super(scope, id);
    const ns = props.namespace ?? 'klutch-control-plane';
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) throw new Error(`AppClusterRole: namespace "${ns}" is not a DNS label`);
    for (const a of props.apis)
      if (!/^[a-z][-a-z0-9]*$/.test(a.resource))
        throw new Error(`AppClusterRole: apis: resource "${a.resource}" (group "${a.group}") is not a lower-case plural`);
    if (props.createNamespace ?? true)
      new Namespace(this, 'Namespace', { metadata: { name: ns, labels: { ...RESTRICTED_NAMESPACE_LABELS } } });
    this.serviceAccount = new ServiceAccount(this, 'ServiceAccount', { metadata: { name: 'konnector', namespace: ns } });
    this.role = new ClusterRole(this, 'ClusterRole', { metadata: { name: APP_CLUSTER_ROLE } });
    // With claimed resources, the checks hold the permission that puts the role's holders under copiesOnly.
    const checks = [...CONTROL_PLANE_KONNECTOR_BASE, ...props.apis.flatMap((a) => boundApiChecks(a, APP_CLUSTER_ROLE))];
    for (const r of rulesFor(checks))
      this.role.allow([...r.verbs], endpoint({ apiGroup: r.group, resourceType: r.resource, ...(r.name ? { resourceName: r.name } : {}) }));
    // The controller asks its SelfSubjectAccessReviews with this identity (every user may by default; said here too).
    this.role.allow(['create'], endpoint({ apiGroup: 'authorization.k8s.io', resourceType: 'selfsubjectaccessreviews' }));
    new ClusterRoleBinding(this, 'ClusterRoleBinding', { metadata: { name: APP_CLUSTER_ROLE }, role: this.role }).addSubjects(
      this.serviceAccount,
    );
    const claimed = [...new Set(props.apis.flatMap((a) => a.claimed ?? []))].sort();
    if (claimed.length) copiesOnly(this, APP_CLUSTER_ROLE, ns, [], claimed);
    // As the konnector's access files do (KonnectorApiAccess): a protected instance is not deleted, by anyone.
    for (const a of props.apis.filter((x) => x.deletionProtection))
      deletionProtection(this, `${APP_CLUSTER_ROLE}-${a.resource}.${a.group}-deletion-protection`, a);
  }
}
