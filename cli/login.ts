/**
 * The login of `kubectl bind <url>`: a loopback callback server, the login URL Klutch's CLI prints (on stderr, after
 * a tab: `<authenticatedURL>?c=<cluster id>&p=<port>&s=<session id>`, keys sorted as Go's url.Values.Encode writes
 * them), the browser opened where the machine has one, and a countdown until the BindingResponse arrives.
 */
import { goQueryEscape } from '../exports/bind-api';
import { startCallbackServer } from './callback';
import { formatDuration } from './duration';
import { CliError, ExitCode, TimeoutError } from './errors';
import { sessionId } from './ids';
import type { Io } from './io';
import { openBrowser } from './open-browser';
import type { Binding } from './response';

export interface LoginOptions {
  readonly authenticatedUrl: string;
  readonly clusterId: string;
  readonly timeoutMs: number;
  /** Try to open a browser. */
  readonly browser: boolean;
  readonly io: Io;
}

/** `<authenticatedURL>` with `c`, `p`, `s` added to its own query, keys sorted and escaped as Go does. */
export function loginUrl(authenticatedUrl: string, params: Readonly<Record<string, string>>): string {
  const u = new URL(authenticatedUrl);
  const all = new Map<string, string[]>();
  for (const [k, v] of u.searchParams) all.set(k, [...(all.get(k) ?? []), v]);
  for (const [k, v] of Object.entries(params)) all.set(k, [v]);
  const query = [...all.keys()]
    .sort()
    .flatMap((k) => all.get(k)!.map((v) => `${goQueryEscape(k)}=${goQueryEscape(v)}`))
    .join('&');
  return `${u.origin}${u.pathname}?${query}`;
}

/** Line the countdown prints (the tests read it). */
const waitingLine = (leftMs: number) => `waiting for the login: ${formatDuration(leftMs)} left`;

export async function login(o: LoginOptions): Promise<Binding> {
  const { io } = o;
  const sid = sessionId();
  const callback = await startCallbackServer(sid);
  try {
    const url = loginUrl(o.authenticatedUrl, { c: o.clusterId, p: String(callback.port), s: sid });
    io.stderr.write(`To authenticate, visit in your browser:\n\n\t${url}\n\n`);
    if (o.browser && (await openBrowser(url, io.env))) io.stderr.write('Opened your browser on that page.\n');
    return await countdown(callback.received, o);
  } finally {
    await callback.close();
  }
}

/** Waits for the response, showing the time left: in place on a terminal, a line every 30 s otherwise. */
async function countdown<T>(received: Promise<T>, o: LoginOptions): Promise<T> {
  const { io } = o;
  const deadline = Date.now() + o.timeoutMs;
  let nextLine = 0;
  const tick = () => {
    const line = waitingLine(deadline - Date.now());
    if (io.interactive) io.stderr.write(`\r\x1b[K${line}`);
    else if (Date.now() >= nextLine) {
      io.stderr.write(`${line}\n`);
      nextLine = Date.now() + 29_500;
    }
  };
  tick();
  const timer = setInterval(tick, 1_000);
  let onAbort: () => void = () => {};
  let expiry: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      received,
      new Promise<never>(
        (_, reject) =>
          (expiry = setTimeout(
            () =>
              reject(
                new TimeoutError(
                  `no login within ${formatDuration(o.timeoutMs)}`,
                  'run kubectl bind again and log in on the printed page (--login-timeout gives more time)',
                ),
              ),
            o.timeoutMs,
          )),
      ),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(new CliError('interrupted while waiting for the login', undefined, ExitCode.Interrupted));
        if (io.signal.aborted) onAbort();
        io.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearInterval(timer);
    clearTimeout(expiry);
    io.signal.removeEventListener('abort', onAbort);
    if (io.interactive) io.stderr.write('\n');
  }
}
