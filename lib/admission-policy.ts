/**
 * ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) as typed
 * cdk8s objects: cdk8s-plus-33 has no construct for them, and its generated k8s types stop at v1beta1.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

const ADMISSION_API_VERSION = 'admissionregistration.k8s.io/v1';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionResourceRule {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly operations: readonly AdmissionOperation[];
  readonly resources: readonly string[];
}

/** A CEL condition on the request; the policy applies only when every condition is true. */
export interface AdmissionMatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** A CEL expression that must be true, else the request is refused with `messageExpression` (or `message`). */
export interface AdmissionValidation {
  readonly expression: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: 'Unauthorized' | 'Forbidden' | 'Invalid' | 'RequestEntityTooLarge';
}

/** A named CEL expression the validations read as `variables.<name>`; evaluated only where one is read. */
export interface AdmissionVariable {
  readonly name: string;
  readonly expression: string;
}

export interface ValidatingAdmissionPolicyProps {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly resourceRules: readonly AdmissionResourceRule[];
  readonly matchConditions?: readonly AdmissionMatchCondition[];
  readonly variables?: readonly AdmissionVariable[];
  readonly validations: readonly AdmissionValidation[];
  /** What the API server does when a CEL expression cannot be evaluated. @default Fail */
  readonly failurePolicy?: 'Fail' | 'Ignore';
}

/** A ValidatingAdmissionPolicy and the binding that enforces it cluster-wide (`validationActions: [Deny]`). */
export class ValidatingAdmissionPolicy extends Construct {
  readonly name: string;

  constructor(scope: Construct, id: string, props: ValidatingAdmissionPolicyProps) {
    super(scope, id);
    this.name = props.name;
    const metadata = { name: props.name, ...(props.labels ? { labels: { ...props.labels } } : {}) };
    new ApiObject(this, 'Policy', {
      apiVersion: ADMISSION_API_VERSION,
      kind: 'ValidatingAdmissionPolicy',
      metadata,
      spec: {
        failurePolicy: props.failurePolicy ?? 'Fail',
        matchConstraints: { resourceRules: props.resourceRules.map((r) => ({ ...r })) },
        ...(props.matchConditions?.length ? { matchConditions: props.matchConditions.map((c) => ({ ...c })) } : {}),
        ...(props.variables?.length ? { variables: props.variables.map((v) => ({ ...v })) } : {}),
        validations: props.validations.map((v) => ({ ...v })),
      },
    });
    new ApiObject(this, 'Binding', {
      apiVersion: ADMISSION_API_VERSION,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata,
      spec: { policyName: props.name, validationActions: ['Deny'] },
    });
  }
}
