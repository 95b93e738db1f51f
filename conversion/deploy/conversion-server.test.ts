import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CONVERSION_TABLE_FILE, render } from '../../synth/synth';
import { CHART_DIR } from '../../synth/helm-chart';
import { versionedBackup } from '../../test/support/versioned-api';
import { CONVERSION_TLS_SECRET } from './conversion-server';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const FILE = 'control-plane/conversion/klutch-kit-conversion.yaml';

describe('the conversion server in the install bundle', () => {
  const files = render({ apis: [versionedBackup()], outdir: 'unused', conversion: { caBundle: CA } });
  const objects = parseAllDocuments(files.get(FILE)!).map((d) => d.toJSON() as Record<string, any>);
  const byKind = (kind: string) => objects.find((o) => o.kind === kind)!;

  it("runs its image behind the Service the XRDs name, with synth's table and the operator's certificate", () => {
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap crossplane-system/klutch-kit-conversion-table',
      'Deployment crossplane-system/klutch-kit-conversion',
      'NetworkPolicy crossplane-system/klutch-kit-conversion',
      'PodDisruptionBudget crossplane-system/klutch-kit-conversion',
      'Service crossplane-system/klutch-kit-conversion',
      'ServiceAccount crossplane-system/klutch-kit-conversion',
    ]);
    expect(byKind('ConfigMap').data['conversions.json']).toBe(files.get(CONVERSION_TABLE_FILE));
    expect(byKind('Service').spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 9443 }]);
    const pod = byKind('Deployment').spec.template.spec;
    expect(pod.containers[0].image).toMatch(/\/conversion-server:v/);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.volumes.find((v: any) => v.secret)?.secret.secretName).toBe(CONVERSION_TLS_SECRET);
    expect(pod.containers[0].securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
    });
    // Reviews in, nothing out: its namespace is Crossplane's, so the fence is its own Pods'.
    expect(byKind('NetworkPolicy').spec).toMatchObject({ policyTypes: ['Ingress', 'Egress'], ingress: [{ ports: [{ port: 9443 }] }] });
    expect(byKind('NetworkPolicy').spec.egress).toBeUndefined();
    // A drain evicts one replica at a time, and the budget covers exactly the Deployment's Pods.
    expect(byKind('PodDisruptionBudget').spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: byKind('Deployment').spec.selector.matchLabels },
    });
  });

  it('rolls its Pods when the table changes', () => {
    const checksum = (f: Map<string, string>) =>
      parseAllDocuments(f.get(FILE)!)
        .map((d) => d.toJSON() as Record<string, any>)
        .find((o) => o.kind === 'Deployment')!.spec.template.metadata.annotations['checksum/table'];
    const other = render({ apis: [versionedBackup({ retention: '30d' })], outdir: 'unused', conversion: { caBundle: CA } });
    expect(checksum(files)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(other)).not.toBe(checksum(files));
  });

  it('is installed by the bundle and the chart alike', () => {
    expect(files.get('control-plane/kustomization.yaml')).toContain('- conversion/klutch-kit-conversion.yaml');
    expect([...files.keys()].filter((f) => f.startsWith(CHART_DIR) && f.includes('klutch-kit-conversion'))).not.toEqual([]);
  });
});
