/**
 * The backend served over HTTPS (--tls-cert-file): the whole flow works, and every cookie it sets is Secure (besides
 * HttpOnly and SameSite=Lax), which Klutch's never are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG, startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { randomBase62, bindFlow, browserFor } from '../../harness/parts/bind-flow';
import { cluster } from '../support/cluster';

let s: BackendSuite;
beforeAll(async () => {
  s = await startBackendSuite(await cluster('a'), { tls: true });
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

describe('over HTTPS', () => {
  it('sets Secure, HttpOnly, SameSite=Lax cookies and binds', async () => {
    expect(s.backend.url.startsWith('https://')).toBe(true);
    const user = s.user();
    const browser = await browserFor(s.idp, user, [s.ca!]);
    // The flow cookie, as /authorize sets it.
    const start = await browser.get(
      `${s.backend.url}/authorize?u=${encodeURIComponent(s.callback.url)}&s=${randomBase62(6)}&c=${randomBase62(6)}`,
      {
        follow: false,
      },
    );
    const setCookie = [start.headers['set-cookie'] ?? []].flat();
    expect(setCookie).toHaveLength(1);
    expect(setCookie[0]).toMatch(/^klutch-bind-flow-\w+=[^;]+; Max-Age=600; Path=\/callback; HttpOnly; Secure; SameSite=Lax$/);

    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, browser, ...PG });
    const session = (await flow.browser.cookies(`${s.backend.url}/`)).find((c) => c.name === `klutch-bind-${flow.sid}`);
    expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'lax' });
    // /export names the https authorize URL.
    const provider = JSON.parse((await flow.browser.get(`${s.backend.url}/export`)).body) as {
      authenticationMethods: { oauth2CodeGrant: { authenticatedURL: string } }[];
    };
    expect(provider.authenticationMethods[0]!.oauth2CodeGrant.authenticatedURL).toBe(`${s.backend.url}/authorize`);
  });
});
