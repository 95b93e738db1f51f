/**
 * How the conversion server runs on the control plane (docs/conversion.md): a Deployment of its image with the table
 * synth wrote in a ConfigMap and a serving certificate from the operator's `kubernetes.io/tls` Secret, behind the
 * Service every multi-version XRD names. Written by synth only where the catalog has such an API.
 */
import { createHash } from 'node:crypto';
import { ApiObject, Duration, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import { releaseImage } from '../../lib/version';
import { RESTRICTED_CONTAINER, RUNTIME_USER } from '../../lib/pod-security';
import { DisruptionBudget } from '../../lib/disruption-budget';
import { PROBE_TIMEOUT, selectorLabels, selectStably } from '../../lib/workload';
import { CONVERSION_PORT } from './deployable';

const DEFAULT_CONVERSION_IMAGE = releaseImage('conversion-server');
/** The operator's Secret of the serving certificate: it must name `<service>.<namespace>.svc`, signed by synth's --conversion-ca. */
export const CONVERSION_TLS_SECRET = 'klutch-kit-conversion-tls';

export interface ConversionServerProps {
  /** Service name and namespace: the XRDs' webhook (synth's default, crossplane-system/klutch-kit-conversion). */
  readonly namespace: string;
  readonly name: string;
  /** conversion/conversions.json as synth wrote it. */
  readonly table: string;
  /** @default DEFAULT_CONVERSION_IMAGE */
  readonly image?: string;
  /** Two by default: while none runs, claims can be read only in their stored version. */
  readonly replicas?: number;
}

const TABLE_DIR = '/etc/klutch-kit/conversion';
const TLS_DIR = '/etc/klutch-kit/conversion-tls';

export class ConversionServer extends Construct {
  readonly service: kplus.Service;

  constructor(scope: Construct, id: string, props: ConversionServerProps) {
    super(scope, id);
    const meta = { name: props.name, namespace: props.namespace };
    const serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', { metadata: meta, automountToken: false });
    const table = new kplus.ConfigMap(this, 'Table', {
      metadata: { name: `${props.name}-table`, namespace: props.namespace },
      data: { 'conversions.json': props.table },
    });
    const deployment = new kplus.Deployment(this, 'Deployment', {
      metadata: meta,
      replicas: props.replicas ?? 2,
      serviceAccount,
      // It reads its table and certificate from files and calls nothing: no API token.
      automountServiceAccountToken: false,
      select: false,
      securityContext: { ensureNonRoot: true, user: RUNTIME_USER, group: RUNTIME_USER },
    });
    const pods = selectStably(deployment, props.name);
    // The table is read at start: a new one rolls the Pods.
    deployment.podMetadata.addAnnotation('checksum/table', createHash('sha256').update(props.table).digest('hex'));
    const container = deployment.addContainer({
      name: 'conversion',
      image: props.image ?? DEFAULT_CONVERSION_IMAGE,
      imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
      args: [
        `--table=${TABLE_DIR}/conversions.json`,
        `--tls-cert-file=${TLS_DIR}/tls.crt`,
        `--tls-key-file=${TLS_DIR}/tls.key`,
        `--address=0.0.0.0:${CONVERSION_PORT}`,
      ],
      ports: [{ number: CONVERSION_PORT, name: 'https' }],
      liveness: kplus.Probe.fromHttpGet('/healthz', {
        port: CONVERSION_PORT,
        scheme: kplus.ConnectionScheme.HTTPS,
        periodSeconds: Duration.seconds(10),
        timeoutSeconds: PROBE_TIMEOUT,
      }),
      readiness: kplus.Probe.fromHttpGet('/healthz', {
        port: CONVERSION_PORT,
        scheme: kplus.ConnectionScheme.HTTPS,
        periodSeconds: Duration.seconds(5),
        timeoutSeconds: PROBE_TIMEOUT,
      }),
      resources: { cpu: { request: kplus.Cpu.millis(50) }, memory: { request: Size.mebibytes(64), limit: Size.mebibytes(256) } },
      securityContext: RESTRICTED_CONTAINER,
    });
    container.mount(TABLE_DIR, kplus.Volume.fromConfigMap(this, 'TableVolume', table, { name: 'table' }), { readOnly: true });
    const tls = kplus.Secret.fromSecretName(this, 'TlsSecret', CONVERSION_TLS_SECRET);
    container.mount(TLS_DIR, kplus.Volume.fromSecret(this, 'TlsVolume', tls, { name: 'tls' }), { readOnly: true });
    this.service = new kplus.Service(this, 'Service', {
      metadata: meta,
      selector: pods,
      ports: [{ port: 443, targetPort: CONVERSION_PORT, name: 'https' }],
    });
    // Its namespace is Crossplane's, so the fence is its Pods' own: reviews in from the API server (whose source
    // address no policy can name portably), nothing out.
    new ApiObject(this, 'NetworkPolicy', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta,
      spec: {
        podSelector: { matchLabels: selectorLabels(props.name) },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ ports: [{ protocol: 'TCP', port: CONVERSION_PORT }] }],
      },
    });
    // A drain takes its replicas one at a time: with none, reads of claims in a version not stored fail.
    new DisruptionBudget(this, 'Budget', meta);
  }
}
