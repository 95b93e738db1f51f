/**
 * A data-service API with two versions, for the tests of issue 36: the catalog's Backup under a test group, whose v2
 * (storage, what the recipes read) renamed `spec.instance` to `spec.instanceRef`, dropped `spec.note` and added
 * `spec.retention` (default 7d).
 */
import { Api, s } from '../../apis';
import backup from '../../apis/catalog/backup';

export const VERSIONED_GROUP = 'versioned.klutch-kit.test';
export const V1_DEPRECATION = 'versioned.klutch-kit.test/v1 Backup is deprecated; write v2 (spec.instance is spec.instanceRef there)';

const serviceInstanceType = s.string({ enum: ['postgresql', 'mariadb'], description: 'The data service of the instance.' });

export interface VersionedBackupOptions {
  readonly deprecated?: boolean;
  /** v2's default of spec.retention (what v1 objects get). @default 7d */
  readonly retention?: string;
  /** @default VERSIONED_GROUP */
  readonly group?: string;
  /** Which versions it serves: before v2 came, both, or after v1 was retired. @default both */
  readonly served?: 'v1' | 'both' | 'v2';
}

export function versionedBackup(o: VersionedBackupOptions = {}): Api {
  const retention = o.retention ?? '7d';
  const v1Spec = s.object(
    {
      instance: s.string({ description: 'Name of the instance claim in the same namespace.' }),
      serviceInstanceType,
      note: s.string({ maxLength: 64, description: 'A note (not in v2).' }),
    },
    { required: ['instance', 'serviceInstanceType'] },
  );
  const v2Spec = s.object(
    {
      instanceRef: s.string({ description: 'Name of the instance claim in the same namespace.' }),
      serviceInstanceType,
      retention: s.string({ default: retention, pattern: '^[0-9]+d$', description: 'How long the backup is kept.' }),
    },
    { required: ['instanceRef', 'serviceInstanceType'] },
  );
  const served = o.served ?? 'both';
  return new Api({
    // Its own name: its Composition (a8s-vbackup) sits beside the catalog's a8s-backup on a control plane.
    name: 'vbackup',
    kind: 'Backup',
    group: o.group ?? VERSIONED_GROUP,
    version: served === 'v1' ? 'v1' : 'v2',
    spec: served === 'v1' ? v1Spec : v2Spec,
    previousVersions:
      served === 'both'
        ? [
            {
              name: 'v1',
              spec: v1Spec,
              ...(o.deprecated ? { deprecated: V1_DEPRECATION } : {}),
              conversion: {
                moved: [{ older: 'spec.instance', newer: 'spec.instanceRef' }],
                added: [{ newer: 'spec.retention', default: retention }],
                removed: ['spec.note'],
              },
            },
          ]
        : [],
    defaultBackend: 'a8s',
    backends: { a8s: backup.backends.a8s! },
    examples: { a8s: { [served === 'v1' ? 'instance' : 'instanceRef']: 'example-postgresql-a8s', serviceInstanceType: 'postgresql' } },
  });
}
