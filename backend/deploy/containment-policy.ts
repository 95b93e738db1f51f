/**
 * What a compromised backend cannot do, whatever its ClusterRole holds (issue 34, item 6). RBAC grants the backend
 * Namespaces, Secrets and `serviceaccounts/token` cluster-wide, because it makes consumers' namespaces at run time and
 * may grant consumers only what it holds itself. This admission policy bounds every write of the backend's
 * ServiceAccount to the namespaces it made (labelled `app.kubernetes.io/managed-by: klutch-kit-backend`) or adopted
 * from Klutch (carrying Klutch's identity or APIServiceNamespace annotation), never its own namespace but for its
 * Leases and events:
 *
 * - a Namespace it creates carries its label; one it changes or deletes was already its own;
 * - no Pod Security label of a Namespace is removed or loosened (only set to `restricted`, or `baseline` where none was);
 * - every namespaced write lands in such a namespace (AppClusterBindings, which it updates where teams keep them, the
 *   Warning Events it creates about them there, and access reviews, which create nothing, excepted);
 * - TokenRequests only for its consumers' ServiceAccount `klutch-binder`: no token of kube-system's controllers;
 * - ClusterRoles only its consumers' (`klutch-binder`, `klutch-binder-<ns>`), aggregated into none; ClusterRoleBindings
 *   only `klutch-binder-<ns>:list-watch` → the ClusterRole of that name (list and watch of exported claims) → that
 *   namespace's `klutch-binder`. Its own ClusterRole bound to a ServiceAccount whose token it may request would
 *   otherwise be all of its powers under a name this policy does not match.
 *
 * What it can still do is in SECURITY.md ("A compromised backend").
 */
import { Construct } from 'constructs';
import { Annotations, BIND_GROUP, Kinds } from '../../exports/bind-api';
import { ValidatingAdmissionPolicy } from '../../lib/admission-policy';
import { Labels, MANAGED_BY } from '../labels';
import { BINDER, LIST_WATCH_SUFFIX } from '../provision/rbac';

const CONTAINMENT_POLICY = 'klutch-bind-backend-containment';

const PSA = 'pod-security.kubernetes.io/';

/**
 * CEL over a policy rule `r` of a role the backend writes: no wildcard, no escalate, bind or impersonate, no workload
 * (core pods and replication controllers, apps, batch), no ServiceAccount or token, no NetworkPolicy (one more allow
 * would open a root namespace's fence around the konnector that holds an app cluster's kubeconfig), RBAC only read.
 */
const SAFE_RULE =
  `!r.verbs.exists(v, v in ['*', 'escalate', 'bind', 'impersonate']) && ` +
  `!r.?apiGroups.orValue([]).exists(g, g in ['*', 'apps', 'batch']) && ` +
  `!r.?resources.orValue([]).exists(x, x == '*' || x == 'pods' || x.startsWith('pods/') || x in ['replicationcontrollers', 'serviceaccounts', 'serviceaccounts/token', 'networkpolicies']) && ` +
  `!(r.?apiGroups.orValue([]).exists(g, g == 'rbac.authorization.k8s.io') && r.verbs.exists(v, !(v in ['get', 'list', 'watch'])))`;

/** CEL: whether the Namespace `x` (an expression) is one the backend made or adopted, and not `own`. */
function ours(x: string, own: string): string {
  return (
    `${x}.metadata.name != '${own}' && (` +
    `${x}.metadata.?labels[?'${Labels.managedBy}'].orValue('') == '${MANAGED_BY}' || ` +
    `${x}.metadata.?annotations[?'${Annotations.identity}'].hasValue() || ` +
    `${x}.metadata.?annotations[?'${Annotations.apiServiceNamespace}'].hasValue())`
  );
}

export interface ContainmentPolicyProps {
  /** The backend's namespace: its ServiceAccount's, where only its Leases and events may be written. */
  readonly namespace: string;
  /** The backend's ServiceAccount. */
  readonly serviceAccount: string;
  readonly labels?: Readonly<Record<string, string>>;
}

export class ContainmentPolicy extends Construct {
  constructor(scope: Construct, id: string, p: ContainmentPolicyProps) {
    super(scope, id);
    const own = p.namespace;
    const levels = ['enforce', 'warn', 'audit'].map((l) => `'${PSA}${l}'`).join(', ');
    new ValidatingAdmissionPolicy(this, 'Policy', {
      name: CONTAINMENT_POLICY,
      labels: p.labels,
      resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['*/*'] }],
      matchConditions: [{ name: 'backend', expression: `request.userInfo.username == 'system:serviceaccount:${own}:${p.serviceAccount}'` }],
      // The request's fields that are empty are absent: read them through variables with their defaults.
      variables: [
        { name: 'ns', expression: `has(request.namespace) ? request.namespace : ''` },
        { name: 'group', expression: `has(request.resource.group) ? request.resource.group : ''` },
        { name: 'subresource', expression: `has(request.subResource) ? request.subResource : ''` },
        { name: 'name', expression: `has(request.name) ? request.name : ''` },
        { name: 'namespaceRequest', expression: `variables.group == '' && request.resource.resource == 'namespaces'` },
        { name: 'inOurNamespace', expression: `namespaceObject != null && ${ours('namespaceObject', own)}` },
        { name: 'oldNamespaceOurs', expression: ours('oldObject', own) },
        {
          // A Warning Event it creates about an AppClusterBinding, beside it (kubectl describe reads it there).
          name: 'eventOnAcb',
          expression:
            `variables.group == '' && request.resource.resource == 'events' && request.operation == 'CREATE' && ` +
            `object.?involvedObject.?kind.orValue('') == '${Kinds.AppClusterBinding}' && ` +
            `object.?involvedObject.?apiVersion.orValue('').startsWith('${BIND_GROUP}/') && ` +
            `object.?involvedObject.?namespace.orValue('') == variables.ns`,
        },
        { name: 'rbac', expression: `variables.group == 'rbac.authorization.k8s.io'` },
        { name: 'newLabels', expression: `object.metadata.?labels.orValue({})` },
        { name: 'oldLabels', expression: `oldObject.metadata.?labels.orValue({})` },
      ],
      validations: [
        {
          expression:
            `!variables.namespaceRequest || (request.operation == 'CREATE' ? ` +
            `object.metadata.?labels[?'${Labels.managedBy}'].orValue('') == '${MANAGED_BY}' : variables.oldNamespaceOurs)`,
          messageExpression:
            `'the bind backend creates, changes and deletes only namespaces it made (labelled ${Labels.managedBy}=${MANAGED_BY}) or adopted from Klutch, not ' + ` +
            `(request.operation == 'CREATE' ? 'one without its label' : 'namespace ' + oldObject.metadata.name)`,
          reason: 'Forbidden',
        },
        {
          // Every Pod Security label is kept, or set to restricted, or (where there was none) to baseline.
          expression:
            `!variables.namespaceRequest || request.operation != 'UPDATE' || ` +
            `[variables.newLabels, variables.oldLabels].all(m, m.all(k, !k.startsWith('${PSA}') || ` +
            `(k in variables.newLabels && k in variables.oldLabels && variables.newLabels[k] == variables.oldLabels[k]) || ` +
            `(k in variables.newLabels && k in [${levels}] && (variables.newLabels[k] == 'restricted' || ` +
            `(!(k in variables.oldLabels) && variables.newLabels[k] == 'baseline')))))`,
          messageExpression: `'the bind backend never removes or loosens a Pod Security label (${PSA}…) of namespace ' + oldObject.metadata.name`,
          reason: 'Forbidden',
        },
        {
          expression:
            `variables.ns == '' || variables.namespaceRequest || ` +
            `variables.group in ['authorization.k8s.io', 'authentication.k8s.io'] || ` +
            `(variables.group == '${BIND_GROUP}' && request.resource.resource == 'appclusterbindings') || ` +
            `variables.eventOnAcb || ` +
            `(variables.ns == '${own}' ? request.resource.resource in ['leases', 'events'] : variables.inOurNamespace)`,
          messageExpression: `'the bind backend writes ' + request.resource.resource + ' only in namespaces it made or adopted (and its Leases and events in ${own}), not in ' + variables.ns`,
          reason: 'Forbidden',
        },
        {
          // Bound cluster-wide, a role's rules apply in every namespace: only a consumer's list-watch role, to that
          // consumer. Its own ClusterRole bound to a ServiceAccount whose token it may request would be every power of
          // the backend under a name this policy does not match.
          expression:
            `!variables.rbac || request.resource.resource != 'clusterrolebindings' || (request.operation == 'DELETE' ? ` +
            `variables.name.startsWith('${BINDER}-') : ` +
            `(object.metadata.name.startsWith('${BINDER}-') && object.metadata.name.endsWith('${LIST_WATCH_SUFFIX}') && ` +
            `object.roleRef.kind == 'ClusterRole' && object.roleRef.name == object.metadata.name && ` +
            `size(object.?subjects.orValue([])) == 1 && object.subjects[0].kind == 'ServiceAccount' && object.subjects[0].name == '${BINDER}' && ` +
            `object.metadata.name == '${BINDER}-' + object.subjects[0].?namespace.orValue('') + '${LIST_WATCH_SUFFIX}'))`,
          messageExpression:
            `request.operation == 'DELETE' ? 'the bind backend deletes only the ClusterRoleBindings of its consumers (${BINDER}-...), not ' + variables.name : ` +
            `'the bind backend binds cluster-wide only the ClusterRole ${BINDER}-<cluster namespace>${LIST_WATCH_SUFFIX} of a consumer, under the same name, to the ServiceAccount ${BINDER} of that namespace; not ClusterRoleBinding ' + object.metadata.name`,
          reason: 'Forbidden',
        },
        {
          // Its consumers' roles only, aggregated into none (aggregation would hand the rules to every holder of
          // admin, edit or view); the one bound cluster-wide lists and watches the exported claims, nothing else.
          expression:
            `!variables.rbac || request.resource.resource != 'clusterroles' || (request.operation == 'DELETE' ? ` +
            `variables.name.startsWith('${BINDER}') : (` +
            `(object.metadata.name == '${BINDER}' || object.metadata.name.startsWith('${BINDER}-')) && ` +
            `!object.?aggregationRule.hasValue() && ` +
            `variables.newLabels.all(k, !k.startsWith('rbac.authorization.k8s.io/aggregate-to-')) && ` +
            `(!object.metadata.name.endsWith('${LIST_WATCH_SUFFIX}') || object.?rules.orValue([]).all(r, ` +
            `r.verbs.all(v, v in ['list', 'watch']) && !r.?nonResourceURLs.hasValue() && ` +
            `!r.?apiGroups.orValue([]).exists(g, g in ['', '*']) && !r.?resources.orValue([]).exists(x, x == '*' || x.contains('/'))))))`,
          messageExpression:
            `'the bind backend writes ClusterRoles only for its consumers (${BINDER}, ${BINDER}-<cluster namespace>), aggregated into none, ' + ` +
            `'and the one bound cluster-wide (${LIST_WATCH_SUFFIX}) lists and watches exported claims only; not ClusterRole ' + variables.name`,
          reason: 'Forbidden',
        },
        {
          // What a role it writes may grant, Role or ClusterRole: nothing that runs a workload, mints a token or
          // writes RBAC. Bound to a ServiceAccount whose token it may request, such a role would run Pods in its
          // namespaces outside the root-namespace policy, which matches only the backend's own name.
          expression:
            `!variables.rbac || !(request.resource.resource in ['roles', 'clusterroles']) || request.operation == 'DELETE' || ` +
            `object.?rules.orValue([]).all(r, ${SAFE_RULE})`,
          messageExpression:
            `'the bind backend writes roles that grant no workload (pods, apps, batch), no ServiceAccount or token, no NetworkPolicy, no RBAC write and no wildcard; not ' + ` +
            `request.resource.resource + ' ' + variables.name`,
          reason: 'Forbidden',
        },
        {
          // A RoleBinding names one of its consumers' roles: never its own ClusterRole or another's.
          expression:
            `!variables.rbac || request.resource.resource != 'rolebindings' || request.operation == 'DELETE' || ` +
            `object.roleRef.kind == 'Role' || object.roleRef.name == '${BINDER}' || object.roleRef.name.startsWith('${BINDER}-')`,
          messageExpression:
            `'the bind backend binds in a namespace only Roles and the ClusterRoles of its consumers (${BINDER}, ${BINDER}-...), not ' + ` +
            `object.roleRef.kind + ' ' + object.roleRef.name`,
          reason: 'Forbidden',
        },
        {
          expression: `request.resource.resource != 'serviceaccounts' || variables.subresource != 'token' || variables.name == '${BINDER}'`,
          messageExpression: `'the bind backend requests tokens only for ServiceAccount ${BINDER}, not ' + variables.ns + '/' + variables.name`,
          reason: 'Forbidden',
        },
      ],
    });
  }
}
