/**
 * `KonnectorApiAccess`: what the konnector may do for one bound API, granted explicitly — its own ClusterRole and
 * ClusterRoleBinding, so binding an API is applying these objects and unbinding it is deleting them. Without it the
 * konnector does not fail quietly: the APIServiceBinding's InformersSynced condition says `Forbidden` and names the
 * file to apply (dist/app-cluster/konnector/access/<plural>.yaml).
 *
 * Grants: the bound resource (read, patch for finalizers, delete when its binding goes) and its status; update and
 * delete of the CRD of that name only; and for each claimed resource (Secrets, ConfigMaps) read, create, update and
 * delete — cluster-wide, because RBAC cannot tell a copy from an app's own object by its label. So with claimed
 * resources comes a ValidatingAdmissionPolicy that can: the konnector's ServiceAccount may create, update and delete
 * only objects that carry its mark (`klutch.anynines.com/resource-owner`, set by claims.reconcile.ts `copyOf`), the
 * old object too on update and delete, so it can never alter or delete an app's own Secret. Reads stay cluster-wide.
 * One exception, for migrating: a copy Klutch's konnector made (annotation `resource-owner: Provider`, no label) may
 * be updated into a marked copy, never deleted as it is. Nor may a copy be a Secret Kubernetes turns into a credential
 * (a ServiceAccount token the token controller fills in, a bootstrap token): with cluster-wide reads, that would be
 * any ServiceAccount's token — kube-system's, cluster-admin.
 */
import { ClusterRole, ClusterRoleBinding, ServiceAccount, type IApiEndpoint, type IApiResource } from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import { Annotations } from '../../exports/bind-api';
import { ValidatingAdmissionPolicy } from '../../lib/admission-policy';
import { COPIES_ONLY_GROUP, COPIES_ONLY_RESOURCE, copiesOnlyCheck } from '../../lib/app-cluster-access';

export interface KonnectorApiAccessProps {
  /** API group of the bound resource, e.g. anynines.com. */
  readonly group: string;
  /** Plural of the bound resource, e.g. postgresqlinstances. */
  readonly resource: string;
  /** Core resources its permission claims copy. @default none */
  readonly claimed?: readonly ('secrets' | 'configmaps')[];
  /** The konnector's namespace (its ServiceAccount `konnector` lives there; names start with it). @default klutch-bind */
  readonly namespace?: string;
  /**
   * Further namespaces where the konnector updates kubeconfig Secrets (KonnectorProps.kubeconfigNamespaces): like
   * its own namespace, the admission policy does not apply there. @default none
   */
  readonly kubeconfigNamespaces?: readonly string[];
  /**
   * The bound resource has `spec.deletionProtection` (an instance): a ValidatingAdmissionPolicy refuses anyone's
   * DELETE of an object whose field is true, the konnector's too, until it is set to false. @default false
   */
  readonly deletionProtection?: boolean;
}

const endpoint = (r: IApiResource): IApiEndpoint => ({ asApiResource: () => r, asNonApiResource: () => undefined });
/** The label the konnector puts on every copy it makes (claims.reconcile.ts `copyOf`). */
const COPY_MARK = Annotations.resourceOwner;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export class KonnectorApiAccess extends Construct {
  readonly role: ClusterRole;
  /** With claimed resources: the policy that keeps the konnector's writes to its own copies. */
  readonly policy?: ValidatingAdmissionPolicy;
  /** With `deletionProtection`: the policy that refuses the deletion of a protected object. */
  readonly protection?: ValidatingAdmissionPolicy;

  constructor(scope: Construct, id: string, props: KonnectorApiAccessProps) {
    super(scope, id);
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(props.group) || !/^[a-z][-a-z0-9]*$/.test(props.resource))
      throw new Error(
        `KonnectorApiAccess: group "${props.group}" and resource "${props.resource}" must be a DNS name and a lower-case plural`,
      );
    const name = `${props.resource}.${props.group}`;
    const ns = props.namespace ?? 'klutch-bind';
    const own = [ns, ...(props.kubeconfigNamespaces ?? [])];
    for (const n of own)
      if (!DNS_LABEL.test(n))
        throw new Error(`KonnectorApiAccess ${name}: namespace "${n}" is not a DNS label (namespace, kubeconfigNamespaces)`);
    this.role = new ClusterRole(this, 'Role', { metadata: { name: `${ns}-konnector-${name}` } });
    const res = (resourceType: string) => endpoint({ apiGroup: props.group, resourceType });
    this.role.allow(['get', 'list', 'watch', 'patch', 'update', 'delete'], res(props.resource));
    this.role.allow(['get', 'patch', 'update'], res(`${props.resource}/status`));
    this.role.allow(
      ['update', 'patch', 'delete'],
      endpoint({ apiGroup: 'apiextensions.k8s.io', resourceType: 'customresourcedefinitions', resourceName: name }),
    );
    const claimed = [...new Set(props.claimed ?? [])];
    // The copies are created, replaced (PUT) and deleted, never patched (claims.controller.ts).
    for (const c of claimed)
      this.role.allow(['get', 'list', 'watch', 'create', 'update', 'delete'], endpoint({ apiGroup: '', resourceType: c }));
    const sa = ServiceAccount.fromServiceAccountName(this, 'ServiceAccount', 'konnector', { namespaceName: ns });
    new ClusterRoleBinding(this, 'Binding', { metadata: { name: this.role.name }, role: this.role }).addSubjects(sa);
    if (claimed.length) {
      const held = copiesOnlyCheck(this.role.name);
      this.role.allow([held.verb], endpoint({ apiGroup: held.group, resourceType: held.resource, resourceName: held.name }));
      this.policy = copiesOnly(this, this.role.name, ns, own, claimed);
    }
    if (props.deletionProtection) this.protection = deletionProtection(this, `${this.role.name}-deletion-protection`, props);
  }
}

/** The field an app developer sets to keep an instance from being deleted, and clears to delete it. */
const DELETION_PROTECTION_FIELD = 'spec.deletionProtection';

/**
 * The policy `name`: a DELETE of the bound resource whose object has `spec.deletionProtection: true` is refused for
 * every user (a `kubectl delete`, a namespace's deletion, the konnector when its binding goes), with a message that
 * names the object, the field and what to do. The claim on the control plane and its database stay.
 */
export function deletionProtection(
  scope: Construct,
  name: string,
  props: { readonly group: string; readonly resource: string },
): ValidatingAdmissionPolicy {
  return new ValidatingAdmissionPolicy(scope, `DeletionProtection-${props.resource}.${props.group}`, {
    name,
    resourceRules: [{ apiGroups: [props.group], apiVersions: ['*'], operations: ['DELETE'], resources: [props.resource] }],
    validations: [
      {
        expression: '!has(oldObject.spec) || !has(oldObject.spec.deletionProtection) || oldObject.spec.deletionProtection != true',
        messageExpression:
          `oldObject.kind + ' ' + oldObject.metadata.namespace + '/' + oldObject.metadata.name + ' is protected from ` +
          `deletion (${DELETION_PROTECTION_FIELD}: true): set ${DELETION_PROTECTION_FIELD} to false, then delete it'`,
        reason: 'Forbidden',
      },
    ],
  });
}

/**
 * Secret types Kubernetes turns into a credential by themselves: the token controller fills a ServiceAccount token
 * into the first, and the API server takes the second (in kube-system) as a bootstrap token. Anything else a copy
 * may be: copies keep the provider's type (Opaque, Crossplane's connection.crossplane.io/v1alpha1, kubernetes.io/tls,
 * kubernetes.io/basic-auth, ...), which is data until a Pod uses it.
 */
const CREDENTIAL_SECRET_TYPES = ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token'] as const;
/** The annotations that name the ServiceAccount a token Secret is for. */
const SERVICE_ACCOUNT_ANNOTATIONS = ['kubernetes.io/service-account.name', 'kubernetes.io/service-account.uid'] as const;
/** A verb no role names: only `*` grants it (cluster-admin, system:masters), whose holders the policy leaves alone. */
const UNRESTRICTED_VERB = 'unrestricted';

/**
 * The policy `name` for the konnector of `ns`, held by the ClusterRole of the same name: it applies to every user
 * that holds that role's marker permission (lib/app-cluster-access.ts `copiesOnlyCheck`) — the ServiceAccount
 * synth binds, or any user, group or ServiceAccount an operator binds to the role — and holds nothing else that `*`
 * does not grant (an administrator who also holds the role is not held). Outside `own` namespaces (where its Roles
 * let it update kubeconfig Secrets), such a user may create, update and delete a claimed Secret or ConfigMap only
 * when the object — and on update and delete the object as it was — carries COPY_MARK, and a Secret only when it is
 * no credential: neither of CREDENTIAL_SECRET_TYPES nor annotated with SERVICE_ACCOUNT_ANNOTATIONS.
 */
export function copiesOnly(
  scope: Construct,
  name: string,
  ns: string,
  own: readonly string[],
  claimed: readonly string[],
): ValidatingAdmissionPolicy {
  const marked = (o: string) => `has(${o}.metadata.labels) && '${COPY_MARK}' in ${o}.metadata.labels`;
  // A copy Klutch's konnector made carries the mark as an annotation only: it may be taken over (updated into a
  // marked copy, validation 1), never deleted as it is (docs/decisions/klutch-migration.md).
  const klutchCopy = (o: string) =>
    `request.operation == 'UPDATE' && has(${o}.metadata.annotations) && '${COPY_MARK}' in ${o}.metadata.annotations && ${o}.metadata.annotations['${COPY_MARK}'] == 'Provider'`;
  const check = (verb: string) =>
    `authorizer.group('${COPIES_ONLY_GROUP}').resource('${COPIES_ONLY_RESOURCE}').name('${name}').check('${verb}').allowed()`;
  const held = copiesOnlyCheck(name);
  const list = (xs: readonly string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
  const credential =
    `(has(object.type) && object.type in ${list(CREDENTIAL_SECRET_TYPES)}) || ` +
    `(has(object.metadata.annotations) && object.metadata.annotations.exists(k, k in ${list(SERVICE_ACCOUNT_ANNOTATIONS)}))`;
  // Inside one CEL string literal: no quotes in `what`, the namespace (a DNS label) or the policy name.
  const who = `the konnector (ServiceAccount ${ns}/konnector, or whoever holds ClusterRole ${name})`;
  const refused = (what: string) =>
    `request.operation + ' of ' + request.resource.resource + ' ' + request.namespace + '/' + request.name + ' refused: ` +
    `${who} may create, update and delete only the copies it made, which carry the label ${COPY_MARK}; ${what}'`;
  return new ValidatingAdmissionPolicy(scope, 'CopiesOnly', {
    name,
    resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: [...claimed].sort() }],
    matchConditions: [
      { name: 'outside-own-namespaces', expression: `!(request.namespace in ${list(own)})` },
      // Whoever holds the role, however bound; not who holds everything anyway.
      { name: 'holds-the-role', expression: `${check(held.verb)} && !${check(UNRESTRICTED_VERB)}` },
    ],
    validations: [
      {
        expression: `request.operation == 'DELETE' || (${marked('object')})`,
        messageExpression: refused('this one would not'),
        reason: 'Forbidden',
      },
      {
        expression: `request.operation == 'CREATE' || (${marked('oldObject')}) || (${klutchCopy('oldObject')})`,
        messageExpression: refused(
          'this one is not such a copy (objects of the app stay untouched: rename one if a claimed object needs its name)',
        ),
        reason: 'Forbidden',
      },
      {
        expression: `request.operation == 'DELETE' || request.resource.resource != 'secrets' || !(${credential})`,
        messageExpression:
          `request.operation + ' of Secret ' + request.namespace + '/' + request.name + ' refused: ${who} copies no ` +
          `credentials of this cluster, and its type ' + (has(object.type) ? object.type : 'Opaque') + ' (field type; ` +
          `refused: ${CREDENTIAL_SECRET_TYPES.join(', ')}) or an annotation ${SERVICE_ACCOUNT_ANNOTATIONS.join(' or ')} ` +
          `would have Kubernetes fill in a token; a copy keeps the type of the provider Secret: share an Opaque Secret ` +
          `without those annotations'`,
        reason: 'Forbidden',
      },
    ],
  });
}
