/** `GET /export` (and HEAD): the BindingProvider document, pointing the CLI at this backend's /authorize. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bindingProvider } from '../../exports/bind-api';
import type { HttpDeps } from './deps';
import { sendJson } from './respond';

/**
 * The authorize URL from the configured external URL. Klutch builds it from the Host header: a forged Host (or a
 * cache keyed without it) would point kubectl bind, and its user's login, at another server.
 */
function authorizeUrl(externalUrl: string): string {
  return `${externalUrl.replace(/\/$/, '')}/authorize`;
}

export function handleExport(_req: IncomingMessage, res: ServerResponse, d: HttpDeps): void {
  const base = d.externalUrl.replace(/\/$/, '');
  // With machine binding on, a second method after Klutch's: Klutch's CLI looks for OAuth2CodeGrant and skips others.
  const machine = d.machine
    ? { issuerURL: d.machine.issuerUrl, resource: d.machine.resource, resourcesURL: `${base}/resources`, bindURL: `${base}/bind` }
    : undefined;
  sendJson(res, 200, bindingProvider(d.prettyName, authorizeUrl(d.externalUrl), machine));
}
