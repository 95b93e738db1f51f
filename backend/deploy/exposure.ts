/**
 * The backend's `/export` (and the login it leads to) must be reachable from wherever `kubectl bind` runs: two
 * optional Components of the install bundle put its Service behind an Ingress or a Gateway API route. The backend
 * serves HTTPS itself (its Service's port 443, `klutch-bind-backend-tls`), so what fronts it re-encrypts: the Ingress
 * names it as an HTTPS backend to the controller, and the route comes with a BackendTLSPolicy that says which CA and
 * name to verify. cdk8s-plus has no construct for either; the fields are networking.k8s.io/v1's and Gateway API
 * v1's (standard channel, v1.6).
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { selectorLabels } from '../../lib/workload';

export interface ExposureProps {
  readonly namespace: string;
  /** The backend's Service, and the name of what is made for it. */
  readonly service: string;
  /** The public host name of `/export` and the login callback (the settings' BACKEND_OIDC_CALLBACK_URL host). */
  readonly host: string;
}

/** The Service port that serves HTTPS (bind-backend.ts). */
const HTTPS_PORT = 443;
/** The `kubernetes.io/tls` Secret of the public host's certificate the Ingress controller serves. */
const EXPORT_TLS_SECRET = 'klutch-bind-export-tls';
/** The ConfigMap (`ca.crt`) with the CA of the backend's own certificate, which the Gateway verifies it with. */
const BACKEND_CA_CONFIGMAP = 'klutch-bind-backend-ca';
/** The Gateway the route attaches to unless an overlay names the platform's own. */
export const DEFAULT_GATEWAY = { name: 'platform-gateway', namespace: 'gateway-system' } as const;

/**
 * An Ingress of the public host to the backend's HTTPS port. Which annotation makes a controller speak HTTPS to its
 * backend is the controller's own (Traefik, HAProxy, NGINX Gateway Fabric and ingress-nginx each differ), so the
 * Ingress names the port `https` and leaves the class and annotations to the overlay (docs/install-bundle.md).
 */
export class BackendIngress extends Construct {
  constructor(scope: Construct, id: string, p: ExposureProps) {
    super(scope, id);
    new ApiObject(this, 'Ingress', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: p.service, namespace: p.namespace, labels: selectorLabels(p.service) },
      spec: {
        tls: [{ hosts: [p.host], secretName: EXPORT_TLS_SECRET }],
        rules: [
          {
            host: p.host,
            http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: p.service, port: { number: HTTPS_PORT } } } }] },
          },
        ],
      },
    });
  }
}

/**
 * An HTTPRoute of the public host to the backend, attached to the platform's Gateway (which terminates the public TLS
 * on its listener), and the BackendTLSPolicy that has the Gateway verify the backend's certificate by its CA.
 */
export class BackendRoute extends Construct {
  constructor(
    scope: Construct,
    id: string,
    p: ExposureProps & { readonly gateway?: { readonly name: string; readonly namespace: string } },
  ) {
    super(scope, id);
    const metadata = { name: p.service, namespace: p.namespace, labels: selectorLabels(p.service) };
    new ApiObject(this, 'Route', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata,
      spec: {
        parentRefs: [{ ...(p.gateway ?? DEFAULT_GATEWAY) }],
        hostnames: [p.host],
        rules: [{ backendRefs: [{ name: p.service, port: HTTPS_PORT }] }],
      },
    });
    new ApiObject(this, 'BackendTLS', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata,
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: p.service }],
        validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: BACKEND_CA_CONFIGMAP }], hostname: p.host },
      },
    });
  }
}
