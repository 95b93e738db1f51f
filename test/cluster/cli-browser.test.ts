/**
 * The human flow of kubectl bind in a real browser, once: the bundled plugin prints the login URL; Playwright
 * (playwright-core) drives Debian's Chromium there — through the backend's /authorize to the OpenID provider's
 * sign-in form, where the user types a name and signs in, back to the /resources page (checked here: title, heading,
 * the API's link by the class Klutch's e2e clicks, the session cookie), a click on the API, and the backend's redirect
 * delivering the BindingResponse to the plugin's loopback callback, which answers "authenticated". The plugin then
 * binds: Secret, export request, APIServiceBinding, exit 0. (The konnector is not part of this test: --skip-konnector
 * with the APIServiceBinding CRD applied as an admin would, and --wait=0.)
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG, startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { installBindCrds } from '../../harness/parts/bind-backend';
import { startCli } from '../../harness/parts/cli';
import { cluster } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { kubeFor, type Kube } from '../../harness/cluster/kube';
import { CHROMIUM_ARGS, ensureChromium } from '../../harness/tools/chromium';

const ns = `kbb-${Math.random().toString(36).slice(2, 8)}`;
const PG_BINDING = `${PG.resource}.${PG.group}`;

let s: BackendSuite;
let b: ClusterInfo;
let kb: Kube;
let browser: Browser;
beforeAll(async () => {
  const executablePath = await ensureChromium();
  b = await cluster('b');
  kb = kubeFor(b);
  [s, browser] = await Promise.all([
    startBackendSuite(await cluster('a'), { loginForm: true, users: 1 }),
    chromium.launch({ executablePath, args: [...CHROMIUM_ARGS] }),
    installBindCrds(kb),
  ]);
}, 20 * 60_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
});

describe('kubectl bind in Chromium', () => {
  it('opens the printed URL, signs in on the provider’s page, binds the clicked API', async () => {
    const user = s.user();
    const run = await startCli([`${s.backend.url}/export`, '--accept-permission-claims', '--skip-konnector', '--wait=0', '-n', ns], {
      kubeconfig: b.kubeconfig,
      closeStdin: true,
    });
    const url = await run.loginUrl();
    const sid = new URL(url).searchParams.get('s')!;
    const port = new URL(url).searchParams.get('p')!;
    // The provider's certificate comes from a test CA the browser does not know.
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(url);

    // The provider's sign-in page.
    expect(new URL(page.url()).origin).toBe(s.idp.issuer);
    await page.getByLabel('User name').fill(user);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.waitForURL(`${s.backend.url}/resources?s=${sid}`);
    expect(await page.title()).toBe('klutch-kit: bind an API');
    // The page is served whole (backend/http/resources.ts) and loaded by now: one read, which Playwright waits for.
    // (expect.poll gave up after its 1 s when Chromium's first answer took longer than that on a loaded machine.)
    expect(await page.locator('h1').textContent()).toBe('klutch-kit: choose an API to bind');
    expect(await page.locator('a.postgresqlinstances').textContent()).toBe('PostgresqlInstance');
    const dir = join(s.backend.dir, 'screenshots');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, 'resources.png') });
    // Session cookie as the browser holds it.
    const session = (await context.cookies(s.backend.url)).find((c) => c.name === `klutch-bind-${sid}`);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });

    await page.click('a.postgresqlinstances');
    await page.waitForURL((u) => u.port === port && u.pathname === '/callback');
    expect(await page.locator('h1').textContent()).toBe('authenticated');
    await context.close();

    const r = await run.done;
    expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
    expect(r.stderr).toContain(`Logged in as ${s.idp.issuer}/${user}`);
    expect(r.stdout).toMatch(
      new RegExp(`^${PG_BINDING.replace('.', '\\.')}\\s+PostgresqlInstance \\(anynines\\.com/v1\\)\\s+.*not checked`, 'm'),
    );
    const binding = await kb.request('GET', `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicebindings/${PG_BINDING}`);
    expect(binding.code).toBe(200);
    expect((binding.body.spec as { kubeconfigSecretRef: { name: string } }).kubeconfigSecretRef.name).toMatch(/^kubeconfig-/);
  });
});
