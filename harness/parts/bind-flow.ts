/**
 * The bind flow as kubectl bind and a user's browser drive it, for suites and benches: /authorize with a loopback
 * callback, the OpenID provider's login (automatic), /callback, /resources, and /bind, whose redirect delivers the
 * BindingResponse to the callback server. Every step is a real HTTP request following real redirects.
 */
import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import { decodeResponseParam, type BindingResponse } from '../../exports/bind-api';
import type { RunningBindBackend, LoopbackCallback } from './bind-backend';
import { Browser, type BrowserRoute, type Page } from '../login/browser';
import type { OidcTestProvider } from '../login/oidc';

export interface FlowOptions {
  readonly backend: Pick<RunningBindBackend, 'url'>;
  readonly idp: Pick<OidcTestProvider, 'issuer' | 'ca' | 'loginCookie'>;
  readonly callback: LoopbackCallback;
  /** Who logs in at the provider. */
  readonly user: string;
  /** @default a new browser (cookie jar) */
  readonly browser?: Browser;
  /** @default 6 random base62 characters */
  readonly sid?: string;
  /** @default 6 random base62 characters */
  readonly cid?: string;
  readonly resource: string;
  readonly group: string;
}

export interface FlowResult {
  readonly browser: Browser;
  readonly sid: string;
  readonly cid: string;
  /** The /resources page. */
  readonly resources: Page;
  /** The last page of /bind (the callback's "authenticated" page). */
  readonly bound: Page;
  readonly response: BindingResponse;
  /** The kubeconfig YAML of the response. */
  readonly kubeconfig: string;
  /** Its namespace (the consumer's cluster namespace). */
  readonly namespace: string;
}

export function randomBase62(n: number): string {
  const a = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  return Array.from(randomBytes(n), (b) => a[b % 62]).join('');
}

/** A browser that trusts the test provider (and the CAs given) and logs in as `user`; `route` as Browser's. */
export async function browserFor(
  idp: FlowOptions['idp'],
  user: string,
  ca: readonly string[] = [],
  route?: BrowserRoute,
): Promise<Browser> {
  const b = new Browser({ ca: [idp.ca, ...ca], route });
  const c = idp.loginCookie(user);
  await b.setCookie(c.name, c.value, idp.issuer);
  return b;
}

/** Logs in: /authorize → provider → /callback → /resources. Returns the /resources page (whatever its status). */
export async function browserLogin(
  o: Omit<FlowOptions, 'resource' | 'group'>,
): Promise<{ browser: Browser; sid: string; cid: string; page: Page }> {
  const browser = o.browser ?? (await browserFor(o.idp, o.user));
  const sid = o.sid ?? randomBase62(6);
  const cid = o.cid ?? randomBase62(6);
  const page = await browser.get(`${o.backend.url}/authorize?u=${encodeURIComponent(o.callback.url)}&s=${sid}&c=${cid}`);
  return { browser, sid, cid, page };
}

/** The whole flow; throws naming the step and its page when one fails. */
export async function bindFlow(o: FlowOptions): Promise<FlowResult> {
  const { browser, sid, cid, page: resources } = await browserLogin(o);
  if (resources.status !== 200 || !new URL(resources.url).pathname.endsWith('/resources')) {
    throw new Error(`login did not reach /resources: ${resources.status} at ${resources.url}: ${resources.body.slice(0, 500)}`);
  }
  const before = o.callback.responses.length;
  const bound = await browser.get(
    `${o.backend.url}/bind?s=${sid}&resource=${encodeURIComponent(o.resource)}&group=${encodeURIComponent(o.group)}`,
  );
  const raw = new URL(bound.url).searchParams.get('response');
  if (bound.status !== 200 || !raw || o.callback.responses.length === before) {
    throw new Error(`/bind did not reach the callback: ${bound.status} at ${bound.url}: ${bound.body.slice(0, 500)}`);
  }
  const response = decodeResponseParam(raw);
  const kubeconfig = Buffer.from(response.kubeconfig, 'base64').toString();
  const namespace = (parse(kubeconfig) as { contexts: { context: { namespace: string } }[] }).contexts[0]!.context.namespace;
  return { browser, sid, cid, resources, bound, response, kubeconfig, namespace };
}
