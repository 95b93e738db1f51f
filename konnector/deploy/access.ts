/**
 * `KonnectorApiAccess`: what the konnector may do for one bound API, granted explicitly — its own ClusterRole and
 * ClusterRoleBinding, so binding an API is applying two objects and unbinding it is deleting them. Without it the
 * konnector does not fail quietly: the APIServiceBinding's InformersSynced condition says `Forbidden` and names the
 * file to apply (dist/app-cluster/konnector/access/<plural>.yaml).
 *
 * Grants: the bound resource (read, patch for finalizers, delete when its binding goes) and its status; update and
 * delete of the CRD of that name only; and for each claimed resource (Secrets, ConfigMaps) the verbs the copies need.
 */
import { ClusterRole, ClusterRoleBinding, ServiceAccount, type IApiEndpoint, type IApiResource } from 'cdk8s-plus-28';
import { Construct } from 'constructs';

export interface KonnectorApiAccessProps {
  /** API group of the bound resource, e.g. anynines.com. */
  readonly group: string;
  /** Plural of the bound resource, e.g. postgresqlinstances. */
  readonly resource: string;
  /** Core resources its permission claims copy. @default none */
  readonly claimed?: readonly ('secrets' | 'configmaps')[];
  /** The konnector's namespace (its ServiceAccount `konnector` lives there; names start with it). @default klutch-bind */
  readonly namespace?: string;
}

const endpoint = (r: IApiResource): IApiEndpoint => ({ asApiResource: () => r, asNonApiResource: () => undefined });

export class KonnectorApiAccess extends Construct {
  readonly role: ClusterRole;

  constructor(scope: Construct, id: string, props: KonnectorApiAccessProps) {
    super(scope, id);
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(props.group) || !/^[a-z][-a-z0-9]*$/.test(props.resource))
      throw new Error(
        `KonnectorApiAccess: group "${props.group}" and resource "${props.resource}" must be a DNS name and a lower-case plural`,
      );
    const name = `${props.resource}.${props.group}`;
    const ns = props.namespace ?? 'klutch-bind';
    this.role = new ClusterRole(this, 'Role', { metadata: { name: `${ns}-konnector-${name}` } });
    const res = (resourceType: string) => endpoint({ apiGroup: props.group, resourceType });
    this.role.allow(['get', 'list', 'watch', 'patch', 'update', 'delete'], res(props.resource));
    this.role.allow(['get', 'patch', 'update'], res(`${props.resource}/status`));
    this.role.allow(
      ['update', 'patch', 'delete'],
      endpoint({ apiGroup: 'apiextensions.k8s.io', resourceType: 'customresourcedefinitions', resourceName: name }),
    );
    for (const c of props.claimed ?? []) {
      this.role.allow(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], endpoint({ apiGroup: '', resourceType: c }));
    }
    const sa = ServiceAccount.fromServiceAccountName(this, 'ServiceAccount', 'konnector', { namespaceName: ns });
    new ClusterRoleBinding(this, 'Binding', { metadata: { name: this.role.name }, role: this.role }).addSubjects(sa);
  }
}
