/** What the bind endpoints need: narrow dependencies in one object, so tests can hand in their own. */
import type { Logger } from 'pino';
import type { AccessTokenVerifier } from '../auth/access-token';
import type { Issuer } from '../auth/issuer';
import type { ReplayGuard } from '../auth/replay';
import type { Sealer } from '../auth/sealer';
import type { DefaultBindPolicy } from '../authz/bind-policy';
import type { RecordedBinder } from '../authz/binder';
import type { ExportableSource } from '../exportable';
import type { BackendMetrics } from '../metrics';
import type { Consumer } from '../provision/consumer';
import type { RateLimiter } from './rate-limit';
import type { TrustedProxies } from './trusted-proxies';

export interface HttpDeps {
  readonly issuer: Pick<Issuer, 'authorizationUrl' | 'exchange' | 'ready' | 'reason'>;
  readonly sealer: Sealer;
  readonly replay: ReplayGuard;
  readonly exportables: ExportableSource;
  /**
   * Finds or makes everything of a consumer identity and returns its namespace and kubeconfig; records who bound on
   * the consumer's ClusterBinding, so the export-request controller applies the same rule to requests made later with
   * the kubeconfig.
   */
  readonly provision: (identity: string, who: RecordedBinder) => Promise<Consumer>;
  /** What applies to a template without a bind rule (--default-bind-policy). */
  readonly defaultBindPolicy: DefaultBindPolicy;
  readonly prettyName: string;
  /** Cookies get the Secure attribute and answers HSTS (browsers reach the backend over HTTPS). */
  readonly secureCookies: boolean;
  /**
   * The backend's external URL (`--oidc-callback-url` without `/callback`): /export's authenticatedURL is built from
   * it, never from the request's Host, which any client chooses.
   */
  readonly externalUrl: string;
  /**
   * Machine binding (--machine-bind): /resources and /bind also take a client-credentials access token, and /export
   * offers the OAuth2ClientCredentials method. @default off
   */
  readonly machine?: {
    readonly verifier: Pick<AccessTokenVerifier, 'verify'>;
    /** The issuer kubectl bind asks for a token (--oidc-issuer-url). */
    readonly issuerUrl: string;
    /** The resource indicator (RFC 8707) it asks the token for (--machine-bind-resource). */
    readonly resource: string;
  };
  /** Limits /authorize, /callback and /bind per client. @default no limit */
  readonly limiter?: RateLimiter;
  /** Proxies whose X-Forwarded-For names the client the limiter counts (--trusted-proxies). @default none */
  readonly trustedProxies?: TrustedProxies;
  readonly metrics: BackendMetrics;
  readonly log: Logger;
  /** @default 10 minutes */
  readonly stateTtlMs?: number;
}
