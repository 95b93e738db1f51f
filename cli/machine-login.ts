/**
 * The machine login of `kubectl bind <url> --client-id` (CI pipelines, GitOps bootstraps; docs/decisions/machine-bind.md):
 * the OAuth2 client-credentials grant at the OpenID provider the backend's BindingProvider names, for a token of the
 * resource it names, then `/bind` per API with that token as `Authorization: Bearer`. The backend answers with the
 * same BindingResponse a browser login delivers to the loopback callback, so everything after it is shared.
 *
 * The client secret is read from a file or an environment variable, never from the command line, and is sent only to
 * the provider's token endpoint (HTTPS; plain http only on loopback). `--oidc-issuer` pins that provider: a backend
 * naming another is refused before anything is sent.
 */
import { readFileSync } from 'node:fs';
import * as oidc from 'openid-client';
import type { ClientCredentialsMethod } from '../exports/bind-api';
import { CliError, ExitCode } from './errors';
import { messageOf } from '../lib/kube-errors';
import type { MachineFlags, SecretSource } from './flags';
import { sessionId } from './ids';
import type { Io } from './io';
import { checkBinding, type Binding } from './response';

/** The client secret from its file (one trailing newline dropped) or environment variable; named in every error. */
export function readClientSecret(source: SecretSource, env: NodeJS.ProcessEnv): string {
  if ('file' in source) {
    let text: string;
    try {
      text = readFileSync(source.file, 'utf8');
    } catch (e) {
      throw new CliError(
        `cannot read --client-secret-file ${source.file}: ${messageOf(e)}`,
        'give the file that holds the client secret',
        ExitCode.Failed,
        { cause: e },
      );
    }
    const secret = text.replace(/\r?\n$/, '');
    if (!secret) throw new CliError(`--client-secret-file ${source.file} is empty`, 'write the client secret into it');
    return secret;
  }
  const secret = env[source.env];
  if (!secret)
    throw new CliError(
      `--client-secret-env ${source.env}: the environment variable ${source.env} is ${secret === undefined ? 'not set' : 'empty'}`,
      'set it to the client secret (a CI secret variable)',
    );
  return secret;
}

/** An http(s) URL the backend named; https unless on loopback, since a secret or token travels to it. */
function safeUrl(field: string, v: unknown): URL {
  let u: URL | undefined;
  try {
    u = typeof v === 'string' ? new URL(v) : undefined;
  } catch {
    u = undefined;
  }
  const fix = 'ask the platform operator: the backend’s /export names it (oauth2ClientCredentials)';
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:'))
    throw new CliError(`the bind backend’s client-credentials method has no valid ${field} (${JSON.stringify(v)})`, fix);
  if (u.protocol === 'http:' && !isLoopback(u.hostname))
    throw new CliError(
      `the bind backend names ${field} ${u.href}: plain http, where a client secret or token would travel in the clear`,
      fix,
    );
  return u;
}

const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);

/** The backend's machine method, checked: every URL valid, and the issuer the one pinned with --oidc-issuer. */
export function machineMethod(url: string, m: Partial<ClientCredentialsMethod> | undefined, pinned?: string): ClientCredentialsMethod {
  if (!m)
    throw new CliError(
      `the bind backend at ${url} offers no machine binding (its BindingProvider has no OAuth2ClientCredentials method)`,
      'ask the platform operator to start the backend with --machine-bind, or bind without --client-id in a browser',
    );
  const issuer = safeUrl('issuerURL', m.issuerURL);
  const backend = new URL(url).origin;
  if (pinned !== undefined && issuer.href.replace(/\/$/, '') !== new URL(pinned).href.replace(/\/$/, ''))
    throw new CliError(
      `the bind backend at ${url} names the OpenID provider ${m.issuerURL}, not ${pinned} (--oidc-issuer); the client secret was not sent`,
      'check the URL of the bind backend, or --oidc-issuer',
    );
  // The document is the backend's word: left to it, a backend at a mistyped or hostile URL would name a provider of its
  // own and receive the client secret. The secret goes to another host only where the user named that host.
  if (pinned === undefined && issuer.origin !== backend)
    throw new CliError(
      `the bind backend at ${url} names the OpenID provider ${m.issuerURL}; the client secret goes to a provider only where you name it, and it was not sent`,
      `if that is your provider, run again with --oidc-issuer ${m.issuerURL}`,
      ExitCode.Usage,
    );
  if (typeof m.resource !== 'string' || !m.resource)
    throw new CliError(`the bind backend’s client-credentials method names no resource`, 'ask the platform operator');
  // The access token goes only to the backend the user named, never to a host the document picks.
  const sameOrigin = (field: string, v: unknown) => {
    const u = safeUrl(field, v);
    if (u.origin !== backend)
      throw new CliError(
        `the bind backend at ${url} names ${field} ${u.href} on another host; the access token goes only to ${backend}, and nothing was sent`,
        'check the URL of the bind backend; if it is right, tell the platform operator that its /export document names another host',
      );
    return u.href;
  };
  return {
    issuerURL: m.issuerURL as string,
    resource: m.resource,
    resourcesURL: sameOrigin('resourcesURL', m.resourcesURL),
    bindURL: sameOrigin('bindURL', m.bindURL),
  };
}

/** An access token for `method.resource`, from the client-credentials grant. */
async function clientCredentialsToken(method: ClientCredentialsMethod, clientId: string, secret: string): Promise<string> {
  const issuer = new URL(method.issuerURL);
  let config: oidc.Configuration;
  try {
    config = await oidc.discovery(issuer, clientId, undefined, oidc.ClientSecretBasic(secret), {
      execute: issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
      timeout: 30,
    });
  } catch (e) {
    throw new CliError(
      `cannot read the OpenID provider’s discovery document at ${method.issuerURL}: ${describe(e)}`,
      'check that the provider is reachable from here (and trusted: NODE_EXTRA_CA_CERTS for a private CA)',
      ExitCode.Failed,
      { cause: e },
    );
  }
  try {
    const tokens = await oidc.clientCredentialsGrant(config, { resource: method.resource });
    return tokens.access_token;
  } catch (e) {
    const err = e as { error?: string; error_description?: string };
    if (err.error)
      throw new CliError(
        `the OpenID provider ${method.issuerURL} refused client ${clientId}: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
        err.error === 'invalid_client'
          ? 'check --client-id and its secret'
          : `ask the provider’s operator to let client ${clientId} use the client-credentials grant for resource ${method.resource}`,
      );
    throw new CliError(`cannot get a token from the OpenID provider ${method.issuerURL}: ${describe(e)}`, 'try again', ExitCode.Failed, {
      cause: e,
    });
  }
}

export interface MachineLoginOptions {
  readonly url: string;
  readonly method: ClientCredentialsMethod;
  readonly flags: MachineFlags;
  /** The APIs to bind: --api and the resources of -f's requests (with the version a request asks for). */
  readonly apis: readonly { readonly group: string; readonly resource: string; readonly version?: string }[];
  readonly clusterId: string;
  readonly io: Io;
}

/** Binds every API with one token: the BindingResponses' requests together, and the (one) consumer's kubeconfig. */
export async function machineLogin(o: MachineLoginOptions): Promise<Binding> {
  const secret = readClientSecret(o.flags.secret, o.io.env);
  o.io.stderr.write(`Asking ${o.method.issuerURL} for a token of ${o.method.resource} as client ${o.flags.clientId}.\n`);
  const token = await clientCredentialsToken(o.method, o.flags.clientId, secret);
  if (!o.apis.length) {
    const offered = await backendGet(o.method.resourcesURL, token, o.flags.clientId);
    const list = (offered as { items?: { group: string; resource: string }[] }).items ?? [];
    throw new CliError(
      `name the APIs to bind: --api <resource>.<group> or -f <request.yaml>; client ${o.flags.clientId} may bind ${list.length ? list.map((a) => `${a.resource}.${a.group}`).join(', ') : 'none of this provider’s APIs'}`,
      undefined,
      ExitCode.Usage,
    );
  }
  const sid = sessionId();
  const bindings: Binding[] = [];
  for (const api of o.apis) {
    const u = new URL(o.method.bindURL);
    u.search = new URLSearchParams({
      s: sid,
      c: o.clusterId,
      resource: api.resource,
      group: api.group,
      ...(api.version ? { version: api.version } : {}),
    }).toString();
    const body = await backendGet(u.href, token, o.flags.clientId, `${api.resource}.${api.group}`);
    bindings.push(checkBinding(body as Parameters<typeof checkBinding>[0], sid));
  }
  const first = bindings[0]!;
  const moved = bindings.find((b) => b.server !== first.server || b.namespace !== first.namespace);
  if (moved)
    throw new CliError(
      `the bind backend put this cluster in two places (${first.namespace} and ${moved.namespace} on ${first.server})`,
      'bind again; if it repeats, tell the platform operator',
    );
  const last = bindings.at(-1)!;
  return { ...last, response: { ...last.response, requests: bindings.flatMap((b) => b.response.requests) } };
}

/** GET with the token; the backend's JSON, or its refusal as an error naming the API and what is missing. */
async function backendGet(url: string, token: string, clientId: string, api?: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      signal: AbortSignal.timeout(60_000),
    });
  } catch (e) {
    throw new CliError(
      `cannot reach the bind backend at ${new URL(url).origin}: ${describe(e)}`,
      'check that the backend is running',
      ExitCode.Failed,
      {
        cause: e,
      },
    );
  }
  const text = await res.text();
  let body: { message?: string } | undefined;
  try {
    body = JSON.parse(text) as { message?: string };
  } catch {
    body = undefined;
  }
  if (res.status === 200 && body) return body;
  const what = api ? `bind ${api}` : 'list its APIs';
  const said = body?.message ?? text.slice(0, 300);
  if (res.status === 403)
    throw new CliError(
      `the bind backend refused to ${what} for client ${clientId}: ${said}`,
      `ask the platform operator to allow client ${clientId} (annotation klutch-kit.anynines.com/bind-allowed-clients on the API’s APIServiceExportTemplate)`,
    );
  if (res.status === 401)
    throw new CliError(
      `the bind backend refused the token of client ${clientId}: ${said}`,
      'the OpenID provider must issue it as a JWT access token (at+jwt) whose audience is the backend’s client ID',
    );
  throw new CliError(`the bind backend could not ${what} (${res.status}): ${said}`, 'try again, or tell the platform operator');
}

function describe(e: unknown): string {
  const err = e as { message?: string; cause?: { message?: string; code?: string } };
  return [err.message ?? String(e), err.cause?.code ?? err.cause?.message].filter(Boolean).join(': ');
}
