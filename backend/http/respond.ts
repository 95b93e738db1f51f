/**
 * How the bind endpoints answer: JSON, HTML pages, redirects, and errors as readable pages that say what went wrong
 * and what to do (Klutch answers every error with a bare 500 `internal error`).
 */
import type { ServerResponse } from 'node:http';

/** A refusal: its HTTP status, the page's title and message, and, for login failures, the metric reason. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    /** Set for authentication failures: the `reason` label of klutch_backend_authentication_failures_total. */
    readonly authReason?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const NO_CACHE = { 'Cache-Control': 'no-cache, no-store, must-revalidate', Pragma: 'no-cache', Expires: '0' };

/**
 * Sent with every answer. Our pages need only their inline <style>: no scripts, frames, forms or other origins. No
 * Referer leaves a page (the /bind redirect carries a kubeconfig token in its URL), and nothing is cached.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'Cache-Control': 'no-store',
};

/** HSTS for a backend browsers reach over https: one year, this host only (the backend does not own its parent domain). */
const HSTS = 'max-age=31536000';

export function setSecurityHeaders(res: ServerResponse, https: boolean): void {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
  if (https) res.setHeader('Strict-Transport-Security', HSTS);
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A whole HTML page; `body` is already escaped HTML. */
export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
li{margin:.5rem 0}a{font-weight:600}code{background:#f2f2f2;padding:0 .2rem}.error{color:#a00}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(value));
}

export function sendHtml(res: ServerResponse, status: number, html: string, cookies: readonly string[] = []): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    ...NO_CACHE,
    ...(cookies.length ? { 'Set-Cookie': [...cookies] } : {}),
  });
  res.end(html);
}

export function redirect(res: ServerResponse, location: string, cookies: readonly string[] = []): void {
  res.writeHead(302, { Location: location, ...NO_CACHE, ...(cookies.length ? { 'Set-Cookie': [...cookies] } : {}) }).end();
}

export function sendError(res: ServerResponse, e: HttpError, cookies: readonly string[] = []): void {
  sendHtml(res, e.status, page(e.title, `<h1 class="error">${escapeHtml(e.title)}</h1>\n<p>${escapeHtml(e.message)}</p>`), cookies);
}
