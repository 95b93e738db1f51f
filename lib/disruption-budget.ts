/**
 * A PodDisruptionBudget for a Deployment of ours: a node drain or cluster upgrade evicts its replicas one at a time,
 * so one always serves (the backend's binds and Lease, in the optional production Component; the conversion server's
 * reviews, without which claims read only in their stored version). cdk8s-plus has no PodDisruptionBudget construct;
 * its fields are policy/v1's.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { selectorLabels } from './workload';

export interface DisruptionBudgetProps {
  readonly namespace: string;
  /** The Deployment whose Pods it covers (they carry `selectorLabels(name)`). */
  readonly name: string;
}

export class DisruptionBudget extends Construct {
  constructor(scope: Construct, id: string, p: DisruptionBudgetProps) {
    super(scope, id);
    new ApiObject(this, 'Budget', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      // Labelled here: a Component's objects are outside the base kustomization's `labels` transformer.
      metadata: { name: p.name, namespace: p.namespace, labels: selectorLabels(p.name) },
      // maxUnavailable, not minAvailable: it still lets a drain proceed when an overlay sets replicas to 1 (a
      // minAvailable of 1 would then block every drain), and scales with more replicas.
      spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(p.name) } },
    });
  }
}
