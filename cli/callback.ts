/**
 * The loopback server the bind backend's redirect delivers the BindingResponse to: `http://localhost:<port>/callback`
 * (the backend builds that URL from `p`), listening on 127.0.0.1 and, where the machine has it, on [::1] with the
 * same port, so a browser that resolves `localhost` either way reaches it. It answers the browser with a page that
 * says what happened and hands each valid response to the waiting login. Any local page can send requests here: one
 * that is not this login's response (undecodable, or for another session) is answered 400 or 409 and ignored.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError } from './errors';
import { messageOf } from '../lib/kube-errors';
import { decodeBinding, NotThisLoginError, OtherSessionError, type Binding } from './response';

export interface CallbackServer {
  readonly port: number;
  /** Resolves with the first valid response for `sid`; rejects on a response that cannot be used. */
  readonly received: Promise<Binding>;
  /** Why requests that were not this login's response were turned away. */
  readonly ignored: string[];
  close(): Promise<void>;
}

const page = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>kubectl bind: ${title}</title></head>` +
  `<body style="font-family: sans-serif; margin: 3em"><h1>${title}</h1><p>${text}</p></body></html>`;
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startCallbackServer(sid: string): Promise<CallbackServer> {
  let resolve!: (b: Binding) => void;
  let reject!: (e: unknown) => void;
  const received = new Promise<Binding>((res, rej) => ((resolve = res), (reject = rej)));
  received.catch(() => undefined); // the login awaits it; nothing else must see an unhandled rejection
  const ignored: string[] = [];
  // The last few only: any local page may send any number.
  const ignore = (why: string): void => {
    if (ignored.length >= 20) ignored.shift();
    ignored.push(why);
  };
  let done = false;
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const u = new URL(req.url ?? '/', 'http://localhost');
    const raw = u.searchParams.get('response');
    const send = (code: number, title: string, text: string): void => {
      // Its URL carries the kubeconfig: no Referer, and nothing the page could load.
      res
        .writeHead(code, {
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          'Referrer-Policy': 'no-referrer',
          'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
        })
        .end(page(title, text));
    };
    if (u.pathname !== '/callback' || req.method !== 'GET') return send(404, 'not found', 'kubectl bind only listens on /callback.');
    if (!raw) {
      ignore('a request without a response parameter');
      return send(400, 'no response', 'The bind backend sent no <code>response</code> parameter.');
    }
    if (done) return send(410, 'already bound', 'This kubectl bind already received its binding; you can close this tab.');
    try {
      const binding = decodeBinding(raw, sid);
      done = true;
      send(200, 'authenticated', 'kubectl bind has your binding. You can close this tab and go back to the terminal.');
      resolve(binding);
    } catch (e) {
      if (e instanceof NotThisLoginError) {
        ignore(e.message);
        if (e instanceof OtherSessionError)
          return send(409, 'wrong session', `${escape(e.message)}. Use the URL this kubectl bind printed.`);
        return send(400, 'not a binding', `${escape(e.message)}; kubectl bind keeps waiting for its login.`);
      }
      done = true;
      send(400, 'binding failed', escape(e instanceof CliError ? e.message : messageOf(e)));
      reject(e);
    }
  };
  const v4 = http.createServer(handler);
  await new Promise<void>((res, rej) => v4.once('error', rej).listen(0, '127.0.0.1', res));
  const port = (v4.address() as AddressInfo).port;
  const servers = [v4];
  const v6 = http.createServer(handler);
  // No IPv6 loopback (or the port is taken there): 127.0.0.1 alone serves `localhost`.
  await new Promise<void>((res) => v6.once('error', () => res()).listen(port, '::1', () => (servers.push(v6), res())));
  return {
    port,
    received,
    ignored,
    // The browser's last page is on its way when the login resumes: idle connections close at once, the rest may
    // finish for a second.
    close: async () => {
      const force = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), 1_000);
      await Promise.all(servers.map((s) => new Promise<void>((r) => (s.close(() => r()), s.closeIdleConnections()))));
      clearTimeout(force);
    },
  };
}
