import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { machineMethod, readClientSecret } from './machine-login';

const method = {
  issuerURL: 'https://idp.example',
  resource: 'https://bind.example',
  resourcesURL: 'https://bind.example/resources',
  bindURL: 'https://bind.example/bind',
};

describe('readClientSecret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubectl-bind-secret-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the file without its trailing newline, or the variable', () => {
    writeFileSync(join(dir, 's'), 'p@ss word\n');
    expect(readClientSecret({ file: join(dir, 's') }, {})).toBe('p@ss word');
    expect(readClientSecret({ env: 'CI_SECRET' }, { CI_SECRET: 'x\ny' })).toBe('x\ny');
  });

  it.each([
    [{ file: join(tmpdir(), 'kubectl-bind-no-such-file') }, {}, /cannot read --client-secret-file .*kubectl-bind-no-such-file: .*ENOENT/],
    [{ env: 'CI_SECRET' }, {}, /--client-secret-env CI_SECRET: the environment variable CI_SECRET is not set/],
    [{ env: 'CI_SECRET' }, { CI_SECRET: '' }, /is empty/],
  ])('names the source that is missing: %j', (source, env, message) => {
    expect(() => readClientSecret(source, env)).toThrow(message);
  });

  it('refuses an empty file', () => {
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() => readClientSecret({ file: join(dir, 'empty') }, {})).toThrow(/--client-secret-file .*empty is empty/);
  });
});

describe('machineMethod', () => {
  const url = 'https://bind.example/export';
  const idp = 'https://idp.example';

  it('takes the backend’s method, and the pinned issuer with or without a trailing slash', () => {
    expect(machineMethod(url, method, idp)).toEqual(method);
    expect(machineMethod(url, method, 'https://idp.example/').issuerURL).toBe('https://idp.example');
    // A provider on the backend's own origin needs no pin; plain http on loopback.
    const local = {
      ...method,
      issuerURL: 'http://127.0.0.1:5556/idp',
      resourcesURL: 'http://127.0.0.1:5556/resources',
      bindURL: 'http://127.0.0.1:5556/bind',
    };
    expect(machineMethod('http://127.0.0.1:5556/export', local).bindURL).toBe('http://127.0.0.1:5556/bind');
  });

  it.each([
    [undefined, idp, /offers no machine binding \(its BindingProvider has no OAuth2ClientCredentials method\)/],
    [
      method,
      'https://other.example',
      /names the OpenID provider https:\/\/idp\.example, not https:\/\/other\.example \(--oidc-issuer\); the client secret was not sent/,
    ],
    // Unpinned, a backend's document cannot send the client secret to a provider of its choosing.
    [
      method,
      undefined,
      /names the OpenID provider https:\/\/idp\.example; the client secret goes to a provider only where you name it, and it was not sent/,
    ],
    [{ ...method, issuerURL: 'http://idp.example' }, undefined, /issuerURL http:\/\/idp\.example\/: plain http/],
    [{ ...method, bindURL: 'http://bind.example/bind' }, idp, /bindURL .*plain http/],
    [{ ...method, resourcesURL: 'file:///etc/passwd' }, idp, /no valid resourcesURL/],
    [{ ...method, resource: '' }, idp, /names no resource/],
    // Nor send the access token to another host.
    [
      { ...method, bindURL: 'https://collector.example/bind' },
      idp,
      /names bindURL https:\/\/collector\.example\/bind on another host; the access token goes only to https:\/\/bind\.example/,
    ],
    [{ ...method, resourcesURL: 'https://bind.example:8443/resources' }, idp, /names resourcesURL .* on another host/],
  ])('refuses %j (pinned %s)', (m, pinned, message) => {
    expect(() => machineMethod(url, m, pinned)).toThrow(message);
  });
});
