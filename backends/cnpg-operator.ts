/**
 * What a claim says while CloudNativePG's operator does not answer, for every cnpg recipe (instances, backups).
 */
import type { ErrorAdvice } from '../recipe';

/**
 * The API server refused a change of a CloudNativePG object because CNPG's operator did not answer: its Pods serve the
 * admission webhooks every Cluster and Backup passes (`mcluster.cnpg.io`, `vbackup.cnpg.io`, ..., failurePolicy Fail),
 * and provider-kubernetes says the API server's words (`failed calling webhook "mcluster.cnpg.io": ... no endpoints
 * available for service "cnpg-webhook-service"`, or `connection refused`). First in each list of advice: those words
 * would otherwise match another rule's (the object store's "connection refused").
 */
export const CNPG_OPERATOR_ADVICE: ErrorAdvice = {
  match: 'failed calling webhook "[a-z0-9.-]+\\.cnpg\\.io"',
  // lib/claim-hold.ts OPERATOR_UNAVAILABLE, which names the data service's hop (backends/cnpg-operator.test.ts).
  reason: 'OperatorUnavailable',
  advice:
    "CloudNativePG's operator, which checks each change of an instance or a backup before the API server takes it, did not answer: the change is applied once it does; the platform operator brings back the operator's Pods",
};
