/**
 * The BindingResponse that arrives at the loopback callback as `?response=`: decoded and checked as Klutch's CLI
 * checks it (kind, apiVersion, the session id of this login), plus what the rest of kubectl bind relies on (a
 * kubeconfig whose context names the consumer's cluster namespace, at least one export request).
 *
 * Decoding accepts both encodings that exist in the wild: standard padded base64 (what Klutch's CLI decodes and our
 * backend sends) and URL-safe base64 (what Klutch's backend actually sends; docs/decisions/bind-backend.md). A `+` of
 * standard base64 that reached us unescaped became a space in the query and is put back.
 *
 * The kubeconfig is the provider's data, not configuration: it is reduced to server, CA, server name, namespace and
 * token (provider-kubeconfig.ts), and one asking for more (`exec`, `auth-provider`, files, `proxy-url`, ...) is
 * refused by field, so a malicious bind URL cannot run anything here or in the app cluster's konnector.
 */
import { BIND_API_VERSION, BINDING_RESPONSE_KIND, decodeResponseParam, Kinds, type BindingResponse } from '../exports/bind-api';
import { CliError } from './errors';
import { providerKubeconfig } from './provider-kubeconfig';

export interface Binding {
  readonly response: BindingResponse;
  /** The provider kubeconfig the response carries, reduced to its canonical YAML (server, CA, namespace, token). */
  readonly kubeconfig: string;
  /** Its server and the consumer's cluster namespace on the provider (the context's namespace). */
  readonly server: string;
  readonly namespace: string;
}

/**
 * Not a response of this login: undecodable, not a BindingResponse, or for another session (a stale browser tab, or
 * any local page sending junk). Answered and ignored: the CLI keeps waiting for its own response.
 */
export class NotThisLoginError extends Error {}

/** A response for another session id. */
export class OtherSessionError extends NotThisLoginError {}

export function decodeBinding(raw: string, sid: string): Binding {
  let response: BindingResponse;
  try {
    response = decodeResponseParam(raw.replaceAll(' ', '+'));
  } catch (e) {
    throw new NotThisLoginError(`the response is not base64-encoded JSON (${(e as Error).message})`, { cause: e });
  }
  return checkBinding(response, sid);
}

/** Checks a decoded BindingResponse (from the callback, or the body of a machine's /bind): this session's, and sound. */
export function checkBinding(response: BindingResponse, sid: string): Binding {
  if (response?.kind !== BINDING_RESPONSE_KIND || response.apiVersion !== BIND_API_VERSION)
    throw new NotThisLoginError(
      `the response is kind "${response?.kind}" apiVersion "${response?.apiVersion}", not a ${BINDING_RESPONSE_KIND} of ${BIND_API_VERSION}`,
    );
  const got = response.authentication?.oauth2CodeGrant?.sid;
  if (got !== sid) throw new OtherSessionError(`a response for session "${got}" arrived; this login is session "${sid}"`);
  // From here on the response is this login's: whatever is wrong with it is the provider's, and ends the login.
  const {
    server,
    namespace,
    yaml: kubeconfig,
  } = providerKubeconfig(
    Buffer.from(typeof response.kubeconfig === 'string' ? response.kubeconfig : '', 'base64').toString('utf8'),
    "the bind backend's BindingResponse (field kubeconfig)",
  );
  const requests = response.requests ?? [];
  if (!requests.length || requests.some((r) => r.kind !== Kinds.APIServiceExportRequest || !r.spec?.resources?.length))
    throw new CliError(
      `the bind backend's response asks for no export (requests: ${JSON.stringify(requests).slice(0, 200)})`,
      'pick an API on the provider’s page',
    );
  return { response, kubeconfig, server, namespace };
}
