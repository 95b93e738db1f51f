/**
 * The BindingResponse that arrives at the loopback callback as `?response=`: decoded and checked as Klutch's CLI
 * checks it (kind, apiVersion, the session id of this login), plus what the rest of kubectl bind relies on (a
 * kubeconfig whose context names the consumer's cluster namespace, at least one export request).
 *
 * Decoding accepts both encodings that exist in the wild: standard padded base64 (what Klutch's CLI decodes and our
 * backend sends) and URL-safe base64 (what Klutch's backend actually sends; docs/decisions/bind-backend.md). A `+` of
 * standard base64 that reached us unescaped became a space in the query and is put back.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { BIND_API_VERSION, BINDING_RESPONSE_KIND, decodeResponseParam, Kinds, type BindingResponse } from '../exports/bind-api';
import { CliError } from './errors';

export interface Binding {
  readonly response: BindingResponse;
  /** The provider kubeconfig (YAML) the response carries. */
  readonly kubeconfig: string;
  /** Its server and the consumer's cluster namespace on the provider (the context's namespace). */
  readonly server: string;
  readonly namespace: string;
}

/** The response is for another login (a stale browser tab): answered and ignored, the CLI keeps waiting. */
export class OtherSessionError extends Error {}

export function decodeBinding(raw: string, sid: string): Binding {
  let response: BindingResponse;
  try {
    response = decodeResponseParam(raw.replaceAll(' ', '+'));
  } catch (e) {
    throw new CliError(
      `the bind backend's response is not base64-encoded JSON (${(e as Error).message})`,
      'bind again; if it keeps failing, the backend does not speak the Klutch bind protocol',
    );
  }
  if (response?.kind !== BINDING_RESPONSE_KIND || response.apiVersion !== BIND_API_VERSION)
    throw new CliError(
      `the bind backend's response is kind "${response?.kind}" apiVersion "${response?.apiVersion}", not a ${BINDING_RESPONSE_KIND} of ${BIND_API_VERSION}`,
      'use a Klutch bind backend',
    );
  const got = response.authentication?.oauth2CodeGrant?.sid;
  if (got !== sid) throw new OtherSessionError(`a response for session "${got}" arrived; this login is session "${sid}"`);
  const kubeconfig = Buffer.from(response.kubeconfig ?? '', 'base64').toString('utf8');
  const kc = new KubeConfig();
  try {
    kc.loadFromString(kubeconfig);
  } catch (e) {
    throw new CliError(`the bind backend's response holds no valid kubeconfig: ${(e as Error).message}`, 'report it to the provider');
  }
  const server = kc.getCurrentCluster()?.server;
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  if (!server || !namespace)
    throw new CliError(
      `the kubeconfig of the bind backend's response names no ${server ? 'namespace in its current context' : 'cluster server'}`,
      'report it to the provider: its kubeconfig must name the consumer’s cluster namespace',
    );
  const requests = response.requests ?? [];
  if (!requests.length || requests.some((r) => r.kind !== Kinds.APIServiceExportRequest || !r.spec?.resources?.length))
    throw new CliError(
      `the bind backend's response asks for no export (requests: ${JSON.stringify(requests).slice(0, 200)})`,
      'pick an API on the provider’s page',
    );
  return { response, kubeconfig, server, namespace };
}
