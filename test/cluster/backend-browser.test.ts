/**
 * The HTML side of the bind flow in a real browser, once: Playwright (playwright-core) driving Debian's Chromium
 * from /authorize through the OpenID provider's login to the /resources page, a click on the API's link (by the
 * class Klutch's e2e clicks), and the BindingResponse arriving at the loopback callback.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeResponseParam } from '../../exports/bind-api';
import { PG, startBackendSuite, type BackendSuite } from '../support/backend-suite';
import { base62 } from '../support/bind-flow';
import { cluster } from '../support/cluster';
import { CHROMIUM_ARGS, ensureChromium } from '../tools/chromium';

let s: BackendSuite;
let browser: Browser;
beforeAll(async () => {
  const executablePath = await ensureChromium();
  s = await startBackendSuite(await cluster('a'));
  browser = await chromium.launch({ executablePath, args: [...CHROMIUM_ARGS] });
}, 20 * 60_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe('the /resources page in Chromium', () => {
  it('logs in, shows the APIs, and binds the clicked one', async () => {
    const user = s.user();
    // The provider's certificate comes from a test CA the browser does not know.
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    await context.addCookies([{ ...s.idp.loginCookie(user), url: s.idp.issuer }]);
    const page = await context.newPage();
    const sid = base62(6);
    await page.goto(`${s.backend.url}/authorize?u=${encodeURIComponent(s.callback.url)}&s=${sid}&c=${base62(6)}`);
    await page.waitForURL(`${s.backend.url}/resources?s=${sid}`);
    expect(await page.title()).toBe('klutch-kit: bind an API');
    await expect.poll(() => page.locator('h1').textContent()).toBe('klutch-kit: choose an API to bind');
    expect(await page.locator('a.postgresqlinstances').textContent()).toBe('PostgresqlInstance');
    const dir = join(s.backend.dir, 'screenshots');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, 'resources.png') });
    // Session cookie as the browser holds it.
    const session = (await context.cookies(s.backend.url)).find((c) => c.name === `klutch-bind-${sid}`);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });

    const before = s.callback.responses.length;
    await page.click('a.postgresqlinstances');
    await page.waitForURL((u) => u.href.startsWith(`${s.callback.url}?response=`));
    expect(await page.locator('h1').textContent()).toBe('authenticated');
    expect(s.callback.responses.length).toBe(before + 1);
    const response = decodeResponseParam(s.callback.responses.at(-1)!);
    expect(response.kind).toBe('BindingResponse');
    expect(response.authentication.oauth2CodeGrant).toEqual({ sid, id: `${s.idp.issuer}/${user}` });
    expect(response.requests[0]!.metadata.name).toBe(`${PG.resource}.${PG.group}`);
    await context.close();
  });
});
