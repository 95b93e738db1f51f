/**
 * A browser without a page renderer, for the HTTP side of login and bind flows: a cookie jar (tough-cookie, which
 * applies Domain, Path, Secure, HttpOnly and expiry as browsers do) and GETs that follow real redirects, hop by
 * hop, over HTTP or HTTPS (trusting the CAs given). Every hop is recorded, so a test can say where a flow went.
 *
 * Each browser is a client of its own, as on a network: it connects to loopback servers from an address of its own in
 * 127.0.0.0/8, so per-client limits (the backend's rate limit) count each browser apart.
 */
import { sleep } from '../../lib/abort';
import { randomInt } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { CookieJar } from 'tough-cookie';

/**
 * Where a browser connects for a URL whose host it cannot reach directly: an address inside a node's network
 * namespace (a Pod network address, an OpenID provider bridged there) reached through a port on the host's
 * loopback that a bridge into the node listens on. The URL, Host header, cookies and certificate check stay the URL's.
 */
export type BrowserRoute = (url: URL) => { readonly host: string; readonly port: number } | undefined;

export interface Hop {
  readonly url: string;
  readonly status: number;
  /** The Location header of a redirect. */
  readonly location?: string;
}

export interface Page {
  /** The URL of the last response. */
  readonly url: string;
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** Every response on the way, the last one included. */
  readonly hops: readonly Hop[];
}

export interface GetOptions {
  /** Follow redirects. @default true */
  readonly follow?: boolean;
  /** Stop before requesting a URL for which this returns true (the URL becomes the last hop, status 0). */
  readonly stopAt?: (url: URL) => boolean;
  /** @default 20 */
  readonly maxHops?: number;
}

export class Browser {
  readonly jar = new CookieJar();
  /** The address this browser connects to 127.x.y.z servers from. */
  readonly localAddress: string;
  private readonly ca: string[];
  private readonly route: BrowserRoute;

  /**
   * `ca`: PEM certificates of the HTTPS servers the flow visits (the system's are not trusted). `localAddress`: where
   * its connections to 127.x.y.z come from. @default a random 127.x.y.z
   */
  constructor(o: { readonly ca?: readonly string[]; readonly localAddress?: string; readonly route?: BrowserRoute } = {}) {
    this.ca = [...(o.ca ?? [])];
    this.route = o.route ?? (() => undefined);
    this.localAddress = o.localAddress ?? `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  }

  /** Puts a cookie into the jar as if `url` had set it. */
  async setCookie(name: string, value: string, url: string): Promise<void> {
    await this.jar.setCookie(`${name}=${value}; Path=/`, url);
  }

  /** The cookies the jar would send to `url`. */
  async cookies(url: string): Promise<{ name: string; value: string; secure: boolean; httpOnly: boolean; sameSite: string }[]> {
    return (await this.jar.getCookies(url)).map((c) => ({
      name: c.key,
      value: c.value,
      secure: c.secure,
      httpOnly: c.httpOnly,
      sameSite: c.sameSite ?? 'none',
    }));
  }

  /** GET `url`, following redirects unless told not to. */
  async get(url: string, o: GetOptions = {}): Promise<Page> {
    const hops: Hop[] = [];
    let current = new URL(url);
    for (let i = 0; ; i++) {
      if (i > (o.maxHops ?? 20))
        throw new Error(`more than ${o.maxHops ?? 20} redirects, starting at ${url}: ${hops.map((h) => h.url).join(' → ')}`);
      if (o.stopAt?.(current)) {
        hops.push({ url: current.href, status: 0 });
        return { url: current.href, status: 0, headers: {}, body: '', hops };
      }
      const res = await this.request(current);
      const location = res.headers.location;
      hops.push({ url: current.href, status: res.status, ...(location ? { location } : {}) });
      if (o.follow === false || !location || ![301, 302, 303, 307, 308].includes(res.status)) {
        return { url: current.href, status: res.status, headers: res.headers, body: res.body, hops };
      }
      current = new URL(location, current);
    }
  }

  private async request(url: URL): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
    const cookie = await this.jar.getCookieString(url.href);
    const headers = { Accept: 'text/html,application/json', ...(cookie ? { Cookie: cookie } : {}) };
    const routed = this.route(url);
    // The workplace's network rule: a test's browser reaches loopback, or a node's network through a route; a URL
    // naming any other host (a node address without its route) must not leave the machine.
    const target = routed?.host ?? url.hostname;
    if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(target)) {
      throw new Error(`GET ${url.href}: the test browser reaches only loopback or a routed node address, not ${target}`);
    }
    const from = /^127\.\d+\.\d+\.\d+$/.test(routed?.host ?? url.hostname) ? { localAddress: this.localAddress } : {};
    const via = routed ? { host: routed.host, hostname: routed.host, port: routed.port, headers: { ...headers, Host: url.host } } : {};
    const identity = routed ? { checkServerIdentity: (_: string, cert: PeerCertificate) => checkServerIdentity(url.hostname, cert) } : {};
    const send = () => this.send(url, headers, from, via, identity);
    const res = await send().catch(async (e: unknown) => {
      // A kept-alive socket the server closed just as this request went out (its keep-alive timeout): a browser sends
      // again on a new connection, as Node's docs advise; the server never saw the first one.
      if (e instanceof StaleSocketError) return send();
      // No connection, or one cut before TLS completed (a Service whose Pod is being replaced): the request never
      // left, and a person would load the page again a moment later. Twice more, 1 s and 2 s apart.
      for (let wait = 1_000; e instanceof UnsentError && wait <= 2_000; wait *= 2) {
        await sleep(wait);
        try {
          return await send();
        } catch (again) {
          e = again;
        }
      }
      throw e;
    });
    for (const c of [res.headers['set-cookie'] ?? []].flat()) await this.jar.setCookie(c, url.href, { ignoreError: true });
    return res;
  }

  private send(
    url: URL,
    headers: http.OutgoingHttpHeaders,
    from: { localAddress?: string },
    via: object,
    identity: object,
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const onResponse = (r: http.IncomingMessage) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body: Buffer.concat(chunks).toString() }));
        r.on('error', reject);
      };
      const req =
        url.protocol === 'https:'
          ? https.get(url, { headers, ca: this.ca.length ? this.ca : undefined, timeout: 30_000, ...from, ...via, ...identity }, onResponse)
          : http.get(url, { headers, timeout: 30_000, ...from, ...via }, onResponse);
      let answered = false;
      // Whether the request could have reached the server: a connection made, and over https, TLS completed.
      let sent = false;
      req.on('socket', (s) => {
        if (req.reusedSocket) sent = true;
        else s.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => (sent = true));
      });
      req.on('response', () => (answered = true));
      req.on('error', (e: NodeJS.ErrnoException) =>
        reject(
          req.reusedSocket && !answered && e.code === 'ECONNRESET'
            ? new StaleSocketError(`GET ${url.href}: ${e.message}`)
            : !sent
              ? new UnsentError(`GET ${url.href}: ${e.message}`)
              : new Error(`GET ${url.href}: ${e.message}`),
        ),
      );
      req.on('timeout', () => req.destroy(new Error('timeout after 30 s')));
    });
  }
}

/** A request reset on a reused keep-alive socket before any answer: safe to send again on a new connection. */
class StaleSocketError extends Error {}

/** A request whose connection failed before it could be sent (refused, or cut before TLS completed). */
class UnsentError extends Error {}
