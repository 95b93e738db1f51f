/**
 * `GET <url>`: the BindingProvider document a bind backend serves at `/export`, checked as Klutch's CLI checks it
 * (apiVersion exactly `v1alpha1`, kind `BindingProvider`, version at least v0.3.0 — v0.0.0, a development build,
 * passes — and an OAuth2CodeGrant method), so a backend ours accepts is one Klutch's accepts too.
 */
import {
  BINDING_PROVIDER_API_VERSION,
  BINDING_PROVIDER_KIND,
  type BindingProvider,
  type ClientCredentialsMethod,
} from '../exports/bind-api';
import { CliError } from './errors';
import { messageOf } from '../lib/kube-errors';
import { sleep } from '../lib/abort';
import { compareVersions, parseVersion } from '../lib/semver';

/** The oldest provider protocol Klutch's CLI speaks. */
const MIN_PROVIDER_VERSION = { major: 0, minor: 3, patch: 0 } as const;

export interface Provider {
  readonly document: BindingProvider;
  /** Where the login starts (`authenticationMethods[].oauth2CodeGrant.authenticatedURL`). */
  readonly authenticatedUrl: string;
  /** Machine binding, when the backend offers it (method OAuth2ClientCredentials; checked where it is used). */
  readonly machine?: Partial<ClientCredentialsMethod>;
}

export interface FetchProviderOptions {
  readonly fetcher?: typeof fetch;
  /** Tries in all while the connection fails or a proxy answers 502-504. @default 4 */
  readonly attempts?: number;
  /** The wait before the second try, doubled before each next. @default 500 */
  readonly backoffMs?: number;
}

/** What a backend behind a load balancer answers while its replicas restart: worth a second GET. */
const PASSING = new Set([502, 503, 504]);

/**
 * Fetches and checks the BindingProvider at `url`. A GET is safe to repeat, so a connection that fails or is cut
 * before TLS completes, or a 502-504 from a proxy, is tried again a few times (about 3.5 s in all by default), as a
 * backend whose replica is being replaced answers a moment later.
 */
export async function fetchProvider(url: string, o: FetchProviderOptions = {}): Promise<Provider> {
  const fetcher = o.fetcher ?? fetch;
  const attempts = o.attempts ?? 4;
  let res: Response | undefined;
  for (let attempt = 1, wait = o.backoffMs ?? 500; ; attempt++, wait *= 2) {
    try {
      res = await fetcher(url, { headers: { Accept: 'application/json' }, redirect: 'follow', signal: AbortSignal.timeout(30_000) });
      if (!PASSING.has(res.status) || attempt >= attempts) break;
      await res.body?.cancel();
    } catch (e) {
      if (attempt >= attempts) {
        const cause = (e as { cause?: unknown }).cause;
        throw new CliError(
          `cannot reach the bind backend at ${url} (${attempts} tries): ${messageOf(cause ?? e)}`,
          'check the URL and that the backend is running; it is the backend’s /export address, e.g. kubectl bind https://bind.example.com/export',
        );
      }
    }
    await sleep(wait);
  }
  const text = await res.text();
  if (res.status !== 200) {
    const hint = new URL(url).pathname.endsWith('/export')
      ? 'check the URL and the backend’s logs'
      : `the BindingProvider is served at /export: try kubectl bind ${new URL('export', url.endsWith('/') ? url : `${url}/`).href}`;
    throw new CliError(`the bind backend at ${url} answered ${res.status} ${res.statusText}: ${text.slice(0, 200)}`, hint);
  }
  return checkProvider(url, text);
}

/** Checks a BindingProvider document (the body of /export). */
export function checkProvider(url: string, text: string): Provider {
  let doc: Partial<BindingProvider>;
  try {
    doc = JSON.parse(text) as Partial<BindingProvider>;
  } catch {
    throw new CliError(
      `${url} did not answer with a BindingProvider (not JSON): ${text.slice(0, 200)}`,
      'point kubectl bind at the bind backend’s /export address',
    );
  }
  const fix = 'point kubectl bind at a Klutch bind backend’s /export address, or update the backend';
  if (doc.kind !== BINDING_PROVIDER_KIND || doc.apiVersion !== BINDING_PROVIDER_API_VERSION)
    throw new CliError(
      `${url} answered kind "${doc.kind}" apiVersion "${doc.apiVersion}", not a ${BINDING_PROVIDER_KIND} of apiVersion ${BINDING_PROVIDER_API_VERSION}`,
      fix,
    );
  const version = parseVersion(doc.version ?? '');
  if (!version) throw new CliError(`the BindingProvider of ${url} has no semantic version (version: "${doc.version}")`, fix);
  const dev = version.major === 0 && version.minor === 0 && version.patch === 0;
  if (!dev && compareVersions(version, MIN_PROVIDER_VERSION) < 0)
    throw new CliError(`the bind backend at ${url} is version ${doc.version}; kubectl bind needs v0.3.0 or later`, 'update the backend');
  const method = (doc.authenticationMethods ?? []).find((m) => m.method === 'OAuth2CodeGrant');
  const authenticatedUrl = method && 'oauth2CodeGrant' in method ? method.oauth2CodeGrant?.authenticatedURL : undefined;
  if (!authenticatedUrl)
    throw new CliError(
      `the BindingProvider of ${url} offers no OAuth2CodeGrant login (authenticationMethods: ${JSON.stringify(doc.authenticationMethods ?? [])})`,
      fix,
    );
  let parsed: URL | undefined;
  try {
    parsed = new URL(authenticatedUrl);
  } catch {
    parsed = undefined;
  }
  // It is printed for the user to open, and opened in the browser: a web page, nothing else.
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
    throw new CliError(`the BindingProvider of ${url} has an invalid authenticatedURL "${authenticatedUrl}": not an http(s) URL`, fix);
  const machine = (doc.authenticationMethods ?? []).find((m) => m.method === 'OAuth2ClientCredentials');
  return {
    document: doc as BindingProvider,
    authenticatedUrl,
    ...(machine && 'oauth2ClientCredentials' in machine && typeof machine.oauth2ClientCredentials === 'object'
      ? { machine: machine.oauth2ClientCredentials }
      : {}),
  };
}
