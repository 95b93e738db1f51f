/** `GET /export`: the BindingProvider document, pointing the CLI at this backend's /authorize. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { bindingProvider } from '../../exports/bind-api';
import type { HttpDeps } from './deps';
import { sendJson } from './respond';

/** `scheme://host` as the client addressed this backend (the Host header; https when TLS, here or at a proxy). */
export function requestOrigin(req: IncomingMessage): string {
  const tls = (req.socket as TLSSocket).encrypted === true || req.headers['x-forwarded-proto'] === 'https';
  return `${tls ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`;
}

export function handleExport(req: IncomingMessage, res: ServerResponse, d: HttpDeps): void {
  sendJson(res, 200, bindingProvider(d.prettyName, `${requestOrigin(req)}/authorize`));
}
