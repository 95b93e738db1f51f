/**
 * STAND-IN for the a8s operators — the PostgreSQL operator, the service-binding controller and the backup manager of
 * a8s (github.com/anynines/a8s-deployment). They cannot run here: they start database Pods, which need a kubelet,
 * a scheduler and images. This stand-in writes only what they would write, and only when a test says so: the status
 * of their objects (the fields of their CRDs in schemas/a8s), and the Secret the service-binding controller writes
 * for a binding. It never touches a spec, and nothing in it acts on its own.
 */
import { join } from 'node:path';
import { PatchStrategy } from '@kubernetes/client-node';
import { installCrdDir } from '../crossplane/crossplane';
import { apply, getIfExists } from '../cluster/kube';
import { ROOT } from '../crossplane/catalog';
import type { Kube } from '../cluster/kube';

/** What the a8s service-binding controller puts into a binding's Secret (`<binding>-service-binding`). */
export interface A8sCredentials {
  readonly database: string;
  readonly instance_service: string;
  readonly password: string;
  readonly username: string;
}

const POSTGRESQLS = '/apis/postgresql.anynines.com/v1beta3';
const BINDINGS = '/apis/servicebindings.anynines.com/v1beta3';
const BACKUPS = '/apis/backups.anynines.com/v1beta3';

export class A8sOperatorsStandIn {
  constructor(private readonly kube: Kube) {}

  /** The a8s CRDs (schemas/a8s), as installing the operators would. */
  async installCrds(): Promise<void> {
    await installCrdDir(this.kube, join(ROOT, 'schemas', 'a8s'));
  }

  /** The PostgreSQL operator: the cluster runs with all its replicas. */
  async postgresqlRunning(namespace: string, name: string): Promise<void> {
    const pg = await this.existing(`${POSTGRESQLS}/namespaces/${namespace}/postgresqls/${name}`);
    await this.status(`${POSTGRESQLS}/namespaces/${namespace}/postgresqls/${name}`, {
      clusterStatus: 'Running',
      readyReplicas: pg.spec?.replicas ?? 1,
    });
  }

  /** The PostgreSQL operator: the cluster does not come up, with the operator's error. */
  async postgresqlFailing(namespace: string, name: string, error: string): Promise<void> {
    await this.existing(`${POSTGRESQLS}/namespaces/${namespace}/postgresqls/${name}`);
    await this.status(`${POSTGRESQLS}/namespaces/${namespace}/postgresqls/${name}`, {
      clusterStatus: 'NotRunning',
      readyReplicas: 0,
      error,
    });
  }

  /** The service-binding controller: it made a database user, wrote `<binding>-service-binding`, and says so. */
  async bindingImplemented(namespace: string, name: string, credentials: A8sCredentials): Promise<void> {
    await this.existing(`${BINDINGS}/namespaces/${namespace}/servicebindings/${name}`);
    const secret = `${name}-service-binding`;
    await apply(this.kube, { apiVersion: 'v1', kind: 'Secret', metadata: { name: secret, namespace }, stringData: { ...credentials } });
    await this.status(`${BINDINGS}/namespaces/${namespace}/servicebindings/${name}`, {
      implemented: true,
      secret: { name: secret, namespace },
    });
  }

  /** The backup manager: the backup was taken and uploaded. */
  async backupSucceeded(namespace: string, name: string, backupID: string): Promise<void> {
    await this.existing(`${BACKUPS}/namespaces/${namespace}/backups/${name}`);
    await this.status(`${BACKUPS}/namespaces/${namespace}/backups/${name}`, { backupID, conditions: [ready('BackupSucceeded')] });
  }

  /** The backup manager: the backup was restored. */
  async restoreSucceeded(namespace: string, name: string): Promise<void> {
    await this.existing(`${BACKUPS}/namespaces/${namespace}/restores/${name}`);
    await this.status(`${BACKUPS}/namespaces/${namespace}/restores/${name}`, { conditions: [ready('RestoreSucceeded')] });
  }

  private async existing(path: string): Promise<Record<string, any>> {
    const obj = await getIfExists(this.kube, path);
    if (!obj) throw new Error(`a8s operators stand-in: ${path} does not exist; nothing for the operator to act on`);
    return obj;
  }

  private async status(path: string, status: Record<string, unknown>): Promise<void> {
    const r = await this.kube.request('PATCH', `${path}/status`, { status }, PatchStrategy.MergePatch);
    if (r.code !== 200)
      throw new Error(`a8s operators stand-in: cannot write the status of ${path}: ${r.code} ${JSON.stringify(r.body.message)}`);
  }
}

function ready(reason: string): Record<string, unknown> {
  return { type: 'Ready', status: 'True', reason, message: reason, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
}
