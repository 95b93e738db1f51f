/**
 * Crossplane's own fields of a claim (or of a namespaced v2 composite) are Crossplane's to write, not a consumer's.
 * The konnector copies a claim's whole spec up, so whatever an app team writes there reaches Crossplane, and a
 * consumer holding its kubeconfig can write more. Three of those fields cross a boundary:
 *
 * - `spec.resourceRef` binds a claim to a composite by name: Crossplane takes any composite no claim holds yet (one
 *   an operator provisioned statically, say), hands its connection details to the claim and deletes it with the claim;
 * - `spec.compositionSelector` (and the revision selector) choose a Composition by its labels where the API's CEL rules
 *   read the backend from `spec.compositionRef` alone: a plan, service or parameter refused on a backend gets through;
 * - `spec.compositionRevisionRef` with `compositionUpdatePolicy: Manual` pins a Composition revision, so an operator's
 *   fixed Composition never reaches that claim.
 *
 * This admission policy lets a consumer (ServiceAccount `klutch-binder` of any namespace, the identity every consumer
 * grant is bound to) create such objects without these fields and never change them (a value Crossplane wrote stays as
 * it is under the konnector's applies); `compositionUpdatePolicy` may only say `Automatic`. Operators keep them.
 */
import { Construct } from 'constructs';
import { ValidatingAdmissionPolicy } from '../../lib/admission-policy';
import { BINDER } from '../provision/rbac';

/** The name of the admission policy ConsumerClaimMachinery ships. */
export const CONSUMER_CLAIM_MACHINERY_POLICY = 'klutch-bind-consumer-claim-machinery';

/** Crossplane's fields at the top of a claim's spec (v1) and under `spec.crossplane` (a v2 composite), but compositionRef. */
const FIELDS = ['resourceRef', 'resourceRefs', 'claimRef', 'compositionSelector', 'compositionRevisionRef', 'compositionRevisionSelector'];
const UPDATE_POLICY = 'compositionUpdatePolicy';

/** CEL: the fields of the (optional) map `at` of `object` a consumer set or changed, as `<prefix><field>`. */
function changed(at: string, prefix: string): string {
  const now = (f: string) => `object.?spec${at}[?${f}]`;
  const before = (f: string) => `oldObject.?spec${at}[?${f}]`;
  const fields = `[${[...FIELDS, UPDATE_POLICY].map((f) => `'${f}'`).join(', ')}]`;
  return (
    `${fields}.filter(f, !(f == '${UPDATE_POLICY}' && ${now('f')}.orValue('Automatic') == 'Automatic') && ` +
    `(variables.create ? ${now('f')}.hasValue() : ${now('f')} != ${before('f')})).map(f, '${prefix}' + f)`
  );
}

export interface ConsumerClaimMachineryProps {
  /** The API groups of the exported claims (BindBackendProps.exportedGroups). */
  readonly exportedGroups: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
}

export class ConsumerClaimMachinery extends Construct {
  constructor(scope: Construct, id: string, p: ConsumerClaimMachineryProps) {
    super(scope, id);
    new ValidatingAdmissionPolicy(this, 'Policy', {
      name: CONSUMER_CLAIM_MACHINERY_POLICY,
      ...(p.labels ? { labels: p.labels } : {}),
      resourceRules: [{ apiGroups: [...p.exportedGroups].sort(), apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['*'] }],
      matchConditions: [
        {
          name: 'consumer',
          expression: `request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':${BINDER}')`,
        },
      ],
      variables: [
        { name: 'create', expression: `request.operation == 'CREATE'` },
        { name: 'changed', expression: `${changed('', 'spec.')} + ${changed('.?crossplane', 'spec.crossplane.')}` },
      ],
      validations: [
        {
          expression: 'size(variables.changed) == 0',
          messageExpression:
            `request.operation + ' of ' + request.resource.resource + ' ' + (has(request.namespace) ? request.namespace + '/' : '') + ` +
            `object.metadata.?name.orValue('') + ` +
            `' refused: a consumer (' + request.userInfo.username + ') may not set or change ' + variables.changed.join(', ') + ` +
            `': Crossplane writes these fields (compositionUpdatePolicy may only be Automatic); remove them from the claim in ` +
            `the app cluster and name the backend in spec.compositionRef (spec.crossplane.compositionRef on Crossplane v2)'`,
          reason: 'Forbidden',
        },
      ],
    });
  }
}
