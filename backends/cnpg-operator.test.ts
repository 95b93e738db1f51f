import { describe, expect, it } from 'vitest';
import type { Api } from '../apis/api';
import { observeStatus } from '../functions/dataservices/status';
import { loadCatalog } from '../harness/crossplane/catalog';
import { SETTINGS } from '../harness/crossplane/function-requests';
import { conditionHold, OPERATOR_UNAVAILABLE } from '../lib/claim-hold';
import { inputFor, type Recipe } from '../recipe';

const apis: Api[] = await loadCatalog();
const recipeOf = (name: string, service: string) =>
  inputFor(apis.find((a) => a.name === name)!.backends.cnpg as Recipe, { backend: 'cnpg', service, settings: SETTINGS, target: 'v1' });

/** An Object provider-kubernetes could not apply, in its words around the API server's. */
const refused = (words: string) => ({
  status: {
    conditions: [{ type: 'Synced', status: 'False', reason: 'ReconcileError', message: `create failed: cannot create object: ${words}` }],
  },
});

// What the API server says while no Pod of CloudNativePG's operator serves its webhooks (failurePolicy Fail).
const NO_ENDPOINTS =
  'Internal error occurred: failed calling webhook "mcluster.cnpg.io": failed to call webhook: Post "https://cnpg-webhook-service.cnpg-system.svc:443/mutate-postgresql-cnpg-io-v1-cluster?timeout=10s": no endpoints available for service "cnpg-webhook-service"';
const REFUSED =
  'Internal error occurred: failed calling webhook "vbackup.cnpg.io": failed to call webhook: Post "https://cnpg-webhook-service.cnpg-system.svc:443/validate-postgresql-cnpg-io-v1-backup?timeout=10s": dial tcp 10.96.0.12:443: connect: connection refused';

describe("CloudNativePG's operator not answering", () => {
  it.each([
    ['an instance', 'postgresql', 'postgresql', NO_ENDPOINTS],
    ['a backup', 'backup', 'backup', REFUSED],
  ])("%s: the claim names the operator, the data service's hop, and what to do", (_, api, service, words) => {
    const { condition } = observeStatus(recipeOf(api, service), refused(words));
    expect(condition).toMatchObject({ status: 'False', reason: OPERATOR_UNAVAILABLE });
    // The API server's words first, then what they mean (not the object store's advice, whose words match too).
    expect(condition?.message).toContain(words);
    expect(condition?.message).toMatch(/; CloudNativePG's operator, .* did not answer: the change is applied once it does/);
    expect(condition?.message).not.toContain('object store');
    expect(
      conditionHold({ type: 'DataServiceReady', status: 'False', reason: condition!.reason, message: condition!.message }),
    ).toMatchObject({
      hop: 'data service',
      todo: expect.stringContaining("the backend's operator does not answer"),
    });
  });

  it("leaves another failure of the provider as it was: its reason, its words, no operator's advice", () => {
    const { condition } = observeStatus(
      recipeOf('postgresql', 'postgresql'),
      refused('admission webhook "other.example.com" denied the request'),
    );
    expect(condition).toMatchObject({ reason: 'ReconcileError' });
    expect(condition?.message).not.toContain("CloudNativePG's operator");
  });
});
