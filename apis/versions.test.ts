import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { Api, s } from '.';
import backup from './catalog/backup';
import { render } from '../synth/synth';
import { CONVERSION_TABLE_FILE, PACKAGE_DIR } from '../synth/synth';
import { parseConversionTable } from '../conversion/table';
import type { PreviousVersion } from './versions';
import { versionedBackup, V1_DEPRECATION, VERSIONED_GROUP } from '../test/support/versioned-api';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJSON() as Record<string, any>);

/** The Backup fixture with v1's conversion (or schema) replaced. */
function withV1(v1: Partial<PreviousVersion>): () => Api {
  const base = versionedBackup();
  return () =>
    new Api({
      name: 'vbackup',
      kind: 'Backup',
      group: VERSIONED_GROUP,
      version: 'v2',
      spec: base.spec,
      previousVersions: [
        {
          name: 'v1',
          spec: base.versions[0]!.spec,
          conversion: base.conversions[0]!,
          ...v1,
        },
      ],
      defaultBackend: 'a8s',
      backends: { a8s: backup.backends.a8s! },
      examples: { a8s: { instanceRef: 'a', serviceInstanceType: 'postgresql' } },
    });
}

describe('an API with a previous version', () => {
  it('serves both in its XRD: the newest referenceable, the older deprecated with its warning, converted by the server', () => {
    const files = render({ apis: [versionedBackup({ deprecated: true })], outdir: 'unused', conversion: { caBundle: CA } });
    const [xrd] = docs(files.get(`${PACKAGE_DIR}/apis/vbackup/definition.yaml`)!);
    const versions = xrd!.spec.versions as Record<string, any>[];
    expect(versions.map((v) => [v.name, v.referenceable, v.deprecated ?? false])).toEqual([
      ['v1', false, true],
      ['v2', true, false],
    ]);
    expect(versions[0]!.deprecationWarning).toBe(V1_DEPRECATION);
    expect(Object.keys(versions[0]!.schema.openAPIV3Schema.properties.spec.properties).sort()).toEqual([
      'instance',
      'note',
      'serviceInstanceType',
    ]);
    expect(Object.keys(versions[1]!.schema.openAPIV3Schema.properties.spec.properties).sort()).toEqual([
      'instanceRef',
      'retention',
      'serviceInstanceType',
    ]);
    expect(xrd!.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: {
          caBundle: Buffer.from(CA).toString('base64'),
          service: {
            namespace: 'crossplane-system',
            name: 'klutch-kit-conversion',
            port: 443,
            path: `/convert/xbackups.${VERSIONED_GROUP}`,
          },
        },
      },
    });
    // The table the server converts by: both kinds, both versions' schemas, the conversion.
    const table = parseConversionTable(files.get(CONVERSION_TABLE_FILE)!, CONVERSION_TABLE_FILE);
    expect(table.apis.map((a) => [a.path, a.kinds, a.versions.map((v) => v.name)])).toEqual([
      [`/convert/xbackups.${VERSIONED_GROUP}`, ['XBackup', 'Backup'], ['v1', 'v2']],
    ]);
    expect(table.apis[0]!.conversions[0]!.moved).toEqual([{ older: 'spec.instance', newer: 'spec.instanceRef' }]);
    // Editors get a JSON Schema of the claim in each version (issue 36 item 6).
    for (const [v, field] of [
      ['v1', 'instance'],
      ['v2', 'instanceRef'],
    ] as const) {
      const schema = JSON.parse(files.get(`schemas/${VERSIONED_GROUP}/backup_${v}.json`)!);
      expect(schema.properties.apiVersion.enum).toEqual([`${VERSIONED_GROUP}/${v}`]);
      expect(schema.properties.spec.required).toContain(field);
    }
  });

  it('gets an export template per version: the oldest under the plural, so app clusters bound before keep it', () => {
    const files = render({ apis: [versionedBackup()], outdir: 'unused', conversion: { caBundle: CA } });
    const template = (name: string) => docs(files.get(`control-plane/export-templates/${name}.yaml`)!)[0]!;
    expect(template('backups').spec.APIServiceSelector).toMatchObject({ resource: 'backups', version: 'v1' });
    expect(template('backups-v2').spec.APIServiceSelector).toMatchObject({ resource: 'backups', version: 'v2' });
  });

  it('a catalog of one version writes no table and no conversion', () => {
    const files = render({ apis: [backup], outdir: 'unused' });
    expect(files.has(CONVERSION_TABLE_FILE)).toBe(false);
    expect(docs(files.get(`${PACKAGE_DIR}/apis/backup/definition.yaml`)!)[0]!.spec.conversion).toBeUndefined();
  });

  it('needs the conversion server CA to be synthesized, and says so', () => {
    expect(() => render({ apis: [versionedBackup()], outdir: 'unused' })).toThrow(
      /data service "vbackup" has versions v1, v2, so its XRD needs the conversion server: give synth its CA \(--conversion-ca <PEM file>\)/,
    );
  });

  it.each([
    [
      'a field the conversion would drop',
      {
        conversion: { moved: [{ older: 'spec.instance', newer: 'spec.instanceRef' }], added: [{ newer: 'spec.retention', default: '7d' }] },
      },
      "versions.v1.conversion: v1's field spec.note is not in v2, and the conversion would drop it; add it to conversion.moved",
    ],
    [
      'a newer field nothing fills',
      { conversion: { moved: [{ older: 'spec.instance', newer: 'spec.instanceRef' }], removed: ['spec.note'] } },
      "v2's field spec.retention is not in v1, and the conversion neither moves nor adds it; add it to conversion.added",
    ],
    [
      'a type change in place',
      {
        spec: s.object({ instance: s.string(), serviceInstanceType: s.integer(), note: s.string() }),
      },
      'spec.serviceInstanceType is integer in v1 and string in v2; a conversion copies values unchanged',
    ],
    [
      'a move from a field v1 lacks',
      {
        conversion: {
          moved: [{ older: 'spec.instanceName', newer: 'spec.instanceRef' }],
          added: [{ newer: 'spec.retention', default: '7d' }],
          removed: ['spec.note'],
        },
      },
      'versions.v1.conversion.moved: spec.instanceName is not a field of v1',
    ],
    ['a version not older', { name: 'v3' }, 'previousVersions[0].name: "v3" is not older than "v2"'],
    ['a field path outside spec and status', { conversion: { removed: ['metadata.labels'] } }, 'is not a field below spec or status'],
  ])('refuses %s, naming the API, the field and the fix', (_what, v1, message) => {
    expect(withV1(v1 as Partial<PreviousVersion>)).toThrow(`data service "vbackup": `);
    expect(withV1(v1 as Partial<PreviousVersion>)).toThrow(message);
  });
});
