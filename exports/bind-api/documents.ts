/**
 * The HTTP documents of Klutch's bind protocol (v1alpha1) and their encodings, written the way Klutch's own CLI
 * decodes them. Key order follows Klutch's Go structs, so the JSON is byte-for-byte what Klutch's backend sends.
 *
 * Klutch encodes inconsistently (docs/decisions/bind-backend.md lists each case): its backend puts the
 * BindingResponse into `?response=` as URL-safe base64 while its CLI decodes standard base64. We emit standard,
 * padded base64, percent-encoded in the query, which Klutch's CLI (and ours) decodes for every byte value.
 */
import { BIND_API_VERSION, Kinds } from './constants';
import type { PermissionClaim } from './permission-claim';

export const BINDING_PROVIDER_KIND = 'BindingProvider';
export const BINDING_RESPONSE_KIND = 'BindingResponse';
/** BindingProvider's apiVersion is the bare version: Klutch's CLI compares it to this string exactly. */
export const BINDING_PROVIDER_API_VERSION = 'v1alpha1';
/** What /export reports; Klutch's CLI refuses providers older than v0.3.0. */
const PROVIDER_VERSION = 'v0.4.0';

export interface BindingProvider {
  kind: typeof BINDING_PROVIDER_KIND;
  apiVersion: typeof BINDING_PROVIDER_API_VERSION;
  providerPrettyName: string;
  version: string;
  authenticationMethods: AuthenticationMethod[];
}

/**
 * Klutch's browser login, and ours for machine identities (CI): the OAuth2 client-credentials grant at `issuerURL`
 * for a token of `resource` (RFC 8707), sent as a bearer token to `resourcesURL` and `bindURL`
 * (docs/decisions/machine-bind.md). Klutch's CLI skips a method it does not know.
 */
export type AuthenticationMethod =
  | { method: 'OAuth2CodeGrant'; oauth2CodeGrant: { authenticatedURL: string } }
  | { method: 'OAuth2ClientCredentials'; oauth2ClientCredentials: ClientCredentialsMethod };

export interface ClientCredentialsMethod {
  issuerURL: string;
  resource: string;
  resourcesURL: string;
  bindURL: string;
}

export interface ExportRequestDocument {
  kind: typeof Kinds.APIServiceExportRequest;
  apiVersion: typeof BIND_API_VERSION;
  metadata: { name: string };
  spec: { resources: { group?: string; resource: string; versions?: string[]; permissionClaims?: PermissionClaim[] }[] };
  status: Record<string, never>;
}

export interface BindingResponse {
  kind: typeof BINDING_RESPONSE_KIND;
  apiVersion: typeof BIND_API_VERSION;
  authentication: { oauth2CodeGrant: { sid: string; id: string } };
  /** Standard base64 of the kubeconfig YAML (a Go []byte). */
  kubeconfig: string;
  requests: ExportRequestDocument[];
}

export function bindingProvider(prettyName: string, authorizeUrl: string, machine?: ClientCredentialsMethod): BindingProvider {
  return {
    kind: BINDING_PROVIDER_KIND,
    apiVersion: BINDING_PROVIDER_API_VERSION,
    providerPrettyName: prettyName,
    version: PROVIDER_VERSION,
    authenticationMethods: [
      { method: 'OAuth2CodeGrant', oauth2CodeGrant: { authenticatedURL: authorizeUrl } },
      ...(machine ? [{ method: 'OAuth2ClientCredentials' as const, oauth2ClientCredentials: machine }] : []),
    ],
  };
}

export interface BindingResponseInput {
  readonly sid: string;
  readonly issuer: string;
  readonly subject: string;
  readonly kubeconfig: string;
  readonly group: string;
  readonly resource: string;
  /** The version asked for: the export request asks for it (`versions`), so the app cluster gets it alone. */
  readonly version?: string;
  readonly permissionClaims: readonly PermissionClaim[];
}

export function bindingResponse(i: BindingResponseInput): BindingResponse {
  const claims = i.permissionClaims.map(wireClaim);
  return {
    kind: BINDING_RESPONSE_KIND,
    apiVersion: BIND_API_VERSION,
    authentication: { oauth2CodeGrant: { sid: i.sid, id: `${i.issuer}/${i.subject}` } },
    kubeconfig: Buffer.from(i.kubeconfig).toString('base64'),
    requests: [
      {
        kind: Kinds.APIServiceExportRequest,
        apiVersion: BIND_API_VERSION,
        metadata: { name: `${i.resource}.${i.group}` },
        spec: {
          resources: [
            {
              ...(i.group ? { group: i.group } : {}),
              resource: i.resource,
              ...(i.version ? { versions: [i.version] } : {}),
              ...(claims.length ? { permissionClaims: claims } : {}),
            },
          ],
        },
        status: {},
      },
    ],
  };
}

/**
 * A permission claim as Klutch sends it: the template's claim after the API server's defaulting (selector names
 * and namespaces `["*"]`, `required: false`, `read: {}`, `onConflict.recreateWhenConsumerSideDeleted: true`), an
 * empty group left out (Go's omitempty). Applying it to an already defaulted claim changes nothing.
 */
export function wireClaim(c: PermissionClaim): PermissionClaim {
  const { group, resource, version, selector, required, autoAdopt, autoDonate, create, onConflict, read, update } = c;
  return {
    ...(group ? { group } : {}),
    resource,
    version,
    selector: { ...selector, names: selector?.names ?? ['*'], namespaces: selector?.namespaces ?? ['*'] },
    required: required ?? false,
    ...(autoAdopt !== undefined ? { autoAdopt } : {}),
    ...(autoDonate !== undefined ? { autoDonate } : {}),
    ...(create ? { create } : {}),
    onConflict: { recreateWhenConsumerSideDeleted: true, ...onConflict },
    read: read ?? {},
    ...(update ? { update } : {}),
  };
}

/**
 * Go's url.QueryEscape: what Klutch's backend writes when it re-encodes a redirect URL's query (`url.Values.Encode`,
 * keys sorted). Only `A-Z a-z 0-9 - _ . ~` stay; a space becomes `+`.
 */
export function goQueryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/**
 * `<redirectURL>?response=<payload>`: the redirect URL's own query parameters kept, `response` set, keys sorted and
 * escaped as Go's url.Values.Encode does. The payload is the BindingResponse JSON in standard padded base64.
 */
export function responseRedirect(redirectUrl: string, response: BindingResponse): string {
  const u = new URL(redirectUrl);
  const params = new Map<string, string[]>();
  for (const [k, v] of u.searchParams) params.set(k, [...(params.get(k) ?? []), v]);
  params.set('response', [Buffer.from(JSON.stringify(response)).toString('base64')]);
  const query = [...params.keys()]
    .sort()
    .flatMap((k) => params.get(k)!.map((v) => `${goQueryEscape(k)}=${goQueryEscape(v)}`))
    .join('&');
  return `${u.origin}${u.pathname}?${query}${u.hash}`;
}

/** What Klutch's CLI does with `?response=`: standard base64, then JSON. */
export function decodeResponseParam(value: string): BindingResponse {
  return JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as BindingResponse;
}
