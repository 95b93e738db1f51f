import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { browserArgv, browserCommand, openBrowser } from './open-browser';

describe('opening the browser', () => {
  it('opens $BROWSER with the URL when set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubectl-bind-browser-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const browser = join(dir, 'browser');
    // Written aside and renamed: the poll below must not see the file that `>` creates before echo has written it.
    writeFileSync(browser, `#!/bin/sh\necho "$1" > ${join(dir, 'opening')} && mv ${join(dir, 'opening')} ${join(dir, 'opened')}\n`);
    chmodSync(browser, 0o755);
    expect(await openBrowser('http://example.test/authorize?c=1&p=2&s=3', { BROWSER: browser })).toBe(true);
    // The browser runs detached: on a loaded machine (a cold run's builds beside it) it may take seconds to start.
    await expect.poll(() => existsSync(join(dir, 'opened')), { timeout: 15_000 }).toBe(true);
    expect(readFileSync(join(dir, 'opened'), 'utf8').trim()).toBe('http://example.test/authorize?c=1&p=2&s=3');
  });

  it('does not try on a machine without a graphical session or $BROWSER; xdg-open with one', () => {
    expect(browserCommand({ PATH: '/usr/bin:/bin' }, 'linux')).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), 'kubectl-bind-xdg-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'xdg-open'), '#!/bin/sh\n');
    chmodSync(join(dir, 'xdg-open'), 0o755);
    expect(browserCommand({ PATH: dir, DISPLAY: ':0' }, 'linux')).toEqual(['xdg-open']);
    expect(browserCommand({ PATH: dir }, 'linux')).toBeUndefined();
    expect(browserCommand({}, 'darwin')).toEqual(['open']);
  });

  it('opens on Windows without a shell: rundll32 with the whole URL as one argument, & and all', () => {
    const url = 'https://bind.example/authorize?c=1&p=2&s=3&x=%26calc';
    expect(browserArgv(url, {}, 'win32')).toEqual(['rundll32', 'url.dll,FileProtocolHandler', url]);
    expect(browserArgv('https://bind.example/a?b=1&calc.exe', {}, 'win32')).toEqual([
      'rundll32',
      'url.dll,FileProtocolHandler',
      'https://bind.example/a?b=1&calc.exe',
    ]);
    expect(browserCommand({}, 'win32')).not.toContain('cmd');
  });

  it('opens only http(s) URLs', async () => {
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'smb://host/share', 'ms-settings:', 'not a url']) {
      expect(browserArgv(url, { BROWSER: '/bin/true' }, 'linux'), url).toBeUndefined();
      expect(browserArgv(url, {}, 'win32'), url).toBeUndefined();
    }
    expect(await openBrowser('file:///etc/passwd', { BROWSER: '/bin/true' })).toBe(false);
    expect(browserArgv('http://127.0.0.1:1/authorize', {}, 'darwin')).toEqual(['open', 'http://127.0.0.1:1/authorize']);
  });
});
