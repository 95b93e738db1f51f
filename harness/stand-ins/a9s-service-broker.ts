/**
 * STAND-IN for provider-anynines and the a9s service broker behind it. provider-anynines asks the broker (an Open
 * Service Broker on an a9s platform) to provision, bind or back up, and writes what the broker answers into its
 * managed resource's status. Neither can run here: the broker is a service of a BOSH/Cloud Foundry platform, and no
 * provider-anynines build is reachable. This stand-in writes only that status (the fields of provider-anynines' CRDs
 * in schemas/provider-anynines, states as the broker names them) and, for a binding, the connection Secret
 * provider-anynines publishes (crossplane-runtime's publisher: the Secret its `spec.writeConnectionSecretToRef` names,
 * controlled by the MR), only when a test says so. It never touches a spec, and nothing in it acts on its own.
 */
import { join } from 'node:path';
import { PatchStrategy } from '@kubernetes/client-node';
import { installCrdDir } from '../crossplane/crossplane';
import { getIfExists } from '../cluster/kube';
import { ROOT } from '../crossplane/catalog';
import type { Kube } from '../cluster/kube';

/** provider-anynines' managed resources (cluster-scoped, dataservices.anynines.com/v1), by kind (their CRDs' plurals). */
export const A9S_PLURALS: Readonly<Record<string, string>> = {
  ServiceInstance: 'serviceinstances',
  ServiceBinding: 'servicebindings',
  Backup: 'backups',
  Restore: 'restores',
};

export class A9sServiceBrokerStandIn {
  constructor(private readonly kube: Kube) {}

  /** provider-anynines' CRDs (schemas/provider-anynines), as installing the provider would. */
  async installCrds(): Promise<void> {
    await installCrdDir(this.kube, join(ROOT, 'schemas', 'provider-anynines'));
  }

  /** The broker finished the operation: the resource is ready. */
  async succeeded(kind: string, name: string): Promise<void> {
    await this.report(kind, name, stateOf(kind, 'succeeded'), [
      condition('Ready', 'True', 'Available'),
      condition('Synced', 'True', 'ReconcileSuccess'),
    ]);
  }

  /**
   * The broker bound: provider-anynines publishes the credentials it answered into the Secret the ServiceBinding's
   * `spec.writeConnectionSecretToRef` names (owned by the MR, type `connection.crossplane.io/v1alpha1`), and the
   * binding is ready.
   */
  async bound(name: string, credentials: Readonly<Record<string, string>>): Promise<void> {
    const path = `/apis/dataservices.anynines.com/v1/servicebindings/${name}`;
    const mr = await getIfExists(this.kube, path);
    if (!mr) throw new Error(`a9s service broker stand-in: ServiceBinding ${name} does not exist; nothing to bind`);
    const ref = mr.spec?.writeConnectionSecretToRef as { name?: string; namespace?: string } | undefined;
    if (!ref?.name || !ref.namespace)
      throw new Error(
        `a9s service broker stand-in: ServiceBinding ${name} has no spec.writeConnectionSecretToRef name and namespace; nowhere to publish`,
      );
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: ref.name,
        namespace: ref.namespace,
        ownerReferences: [
          { apiVersion: 'dataservices.anynines.com/v1', kind: 'ServiceBinding', name, uid: mr.metadata.uid, controller: true },
        ],
      },
      type: 'connection.crossplane.io/v1alpha1',
      data: Object.fromEntries(Object.entries(credentials).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    };
    const r = await this.kube.request('POST', `/api/v1/namespaces/${ref.namespace}/secrets`, secret);
    if (r.code !== 201 && r.code !== 409)
      throw new Error(
        `a9s service broker stand-in: cannot publish Secret ${ref.namespace}/${ref.name}: ${r.code} ${JSON.stringify(r.body.message)}`,
      );
    await this.succeeded('ServiceBinding', name);
  }

  /** The broker is still working on it. */
  async inProgress(kind: string, name: string): Promise<void> {
    await this.report(kind, name, stateOf(kind, 'in progress'), [
      condition('Ready', 'False', 'Creating'),
      condition('Synced', 'True', 'ReconcileSuccess'),
    ]);
  }

  /** The broker says the operation failed, with its description. */
  async failed(kind: string, name: string, description: string): Promise<void> {
    await this.report(kind, name, stateOf(kind, 'failed'), [
      condition('Ready', 'False', 'Unavailable', description),
      condition('Synced', 'True', 'ReconcileSuccess'),
    ]);
  }

  private async report(kind: string, name: string, atProvider: Record<string, unknown>, conditions: unknown[]): Promise<void> {
    const plural = A9S_PLURALS[kind];
    if (!plural)
      throw new Error(`a9s service broker stand-in: provider-anynines has no kind ${kind}; it has ${Object.keys(A9S_PLURALS).join(', ')}`);
    const path = `/apis/dataservices.anynines.com/v1/${plural}/${name}`;
    if (!(await getIfExists(this.kube, path)))
      throw new Error(`a9s service broker stand-in: ${kind} ${name} does not exist; nothing to report on`);
    const r = await this.kube.request('PATCH', `${path}/status`, { status: { atProvider, conditions } }, PatchStrategy.MergePatch);
    if (r.code !== 200)
      throw new Error(
        `a9s service broker stand-in: cannot write the status of ${kind} ${name}: ${r.code} ${JSON.stringify(r.body.message)}`,
      );
  }
}

/**
 * Where provider-anynines keeps the broker's answer: `state` (the Open Service Broker's last-operation state) on
 * instances and bindings; the backup manager's `status` ("done", "running", "failed") on backups and restores.
 */
function stateOf(kind: string, osb: 'succeeded' | 'in progress' | 'failed'): Record<string, unknown> {
  if (kind === 'Backup') return { status: { succeeded: 'done', 'in progress': 'running', failed: 'failed' }[osb] };
  if (kind === 'Restore') return { state: { succeeded: 'done', 'in progress': 'running', failed: 'failed' }[osb] };
  return { state: osb };
}

function condition(type: string, status: string, reason: string, message?: string): Record<string, unknown> {
  return { type, status, reason, ...(message ? { message } : {}), lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
}
