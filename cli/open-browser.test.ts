import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { browserCommand, openBrowser } from './open-browser';

describe('opening the browser', () => {
  it('opens $BROWSER with the URL when set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubectl-bind-browser-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const browser = join(dir, 'browser');
    writeFileSync(browser, `#!/bin/sh\necho "$1" > ${join(dir, 'opened')}\n`);
    chmodSync(browser, 0o755);
    expect(await openBrowser('http://example.test/authorize?c=1&p=2&s=3', { BROWSER: browser })).toBe(true);
    await expect.poll(() => existsSync(join(dir, 'opened'))).toBe(true);
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
});
