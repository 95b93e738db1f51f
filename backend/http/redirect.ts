/**
 * Where a BindingResponse may go. It carries a kubeconfig with a token, so only to the CLI's own callback server on
 * this machine: `http://localhost:<port>/…`, `http://127.0.0.1:<port>/…` or `http://[::1]:<port>/…`. Klutch's
 * backend sends it to whatever `u` it is given.
 */

export class RedirectError extends Error {}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The callback URL of `/authorize`'s `p` (a port) or `u` (a URL); throws RedirectError saying what is wrong. */
export function callbackUrl(p: string | null, u: string | null): string {
  if (p && u) throw new RedirectError('give either p (the port of your callback) or u (its URL), not both');
  if (!p && !u) throw new RedirectError('p (the port of your local callback) or u (its URL) is required');
  if (p) {
    const port = Number(p);
    if (!/^\d{1,5}$/.test(p) || port < 1 || port > 65535) throw new RedirectError(`p: "${p}" is not a port number`);
    return `http://localhost:${port}/callback`;
  }
  let url: URL;
  try {
    url = new URL(u!);
  } catch {
    throw new RedirectError(`u: "${u}" is not a URL`);
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname) || url.username || url.password || !url.port) {
    throw new RedirectError(
      `u: "${u}" is not a loopback callback; the binding (a kubeconfig with a token) is only sent to http://localhost:<port>/..., http://127.0.0.1:<port>/... or http://[::1]:<port>/...`,
    );
  }
  return url.href;
}
