import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bindingResponse, responseRedirect } from '../exports/bind-api';
import type { Io } from './io';
import { login, loginUrl } from './login';

describe('the login URL', () => {
  it('is the authenticatedURL with c, p and s in Go’s sorted, escaped form, keeping its own parameters', () => {
    expect(loginUrl('https://bind.example/authorize', { c: 'x7K2pQ', p: '39123', s: 'Ab3xY9' })).toBe(
      'https://bind.example/authorize?c=x7K2pQ&p=39123&s=Ab3xY9',
    );
    expect(loginUrl('https://bind.example/authorize?tenant=a b&z=1', { s: 'S', c: 'C', p: '1' })).toBe(
      'https://bind.example/authorize?c=C&p=1&s=S&tenant=a+b&z=1',
    );
  });
});

const kubeconfig =
  'apiVersion: v1\nkind: Config\nclusters: [{name: default, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: default, user: {token: t}}]\ncontexts: [{name: default, context: {cluster: default, user: default, namespace: cluster-a}}]\ncurrent-context: default\n';

function io(): Io & { err: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  return {
    stdout: new PassThrough(),
    stderr,
    stdin: new PassThrough(),
    env: {},
    interactive: false,
    signal: new AbortController().signal,
    err: () => err,
  };
}

const get = (url: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) =>
    http
      .get(url, (r) => {
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      })
      .on('error', reject),
  );

describe('login', () => {
  it('prints the URL after a tab on stderr, counts down, and takes the response at localhost:<p>/callback', async () => {
    const o = io();
    const done = login({
      authenticatedUrl: 'https://bind.example/authorize',
      clusterId: 'x7K2pQ',
      timeoutMs: 60_000,
      browser: false,
      io: o,
    });
    await expect.poll(() => o.err()).toMatch(/waiting for the login: (1m00s|59s) left/);
    const url = new URL(/To authenticate, visit in your browser:\n\n\t(\S+)\n/.exec(o.err())![1]!);
    expect([...url.searchParams.keys()]).toEqual(['c', 'p', 's']);
    expect(url.searchParams.get('c')).toBe('x7K2pQ');
    const sid = url.searchParams.get('s')!;
    // What the backend does with p (http://localhost:<p>/callback), and a stale tab of another login first.
    const callback = `http://localhost:${url.searchParams.get('p')}/callback`;
    const other = bindingResponse({
      sid: 'other1',
      issuer: 'https://idp',
      subject: 'u',
      kubeconfig,
      group: 'g.io',
      resource: 'rs',
      permissionClaims: [],
    });
    expect((await get(responseRedirect(callback, other))).status).toBe(409);
    const mine = bindingResponse({
      ...{ sid, issuer: 'https://idp', subject: 'u', kubeconfig },
      group: 'g.io',
      resource: 'rs',
      permissionClaims: [],
    });
    const page = await get(responseRedirect(callback, mine));
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>authenticated</h1>');
    const b = await done;
    expect(b.namespace).toBe('cluster-a');
    expect(b.response.requests[0]!.metadata.name).toBe('rs.g.io');
  });

  it('gives up after the login timeout, with exit code 3', async () => {
    await expect(
      login({ authenticatedUrl: 'https://bind.example/authorize', clusterId: 'c', timeoutMs: 300, browser: false, io: io() }),
    ).rejects.toMatchObject({ exitCode: 3, message: 'no login within 1s' });
  });

  /** Starts a login; resolves with it, its callback URL and session id once the URL is printed. */
  async function started(timeoutMs = 60_000) {
    const o = io();
    const done = login({ authenticatedUrl: 'https://bind.example/authorize', clusterId: 'c', timeoutMs, browser: false, io: o });
    done.catch(() => undefined);
    await expect.poll(() => o.err()).toContain('waiting for the login');
    const url = new URL(/\t(\S+)\n/.exec(o.err())![1]!);
    return { done, callback: `http://localhost:${url.searchParams.get('p')}/callback`, sid: url.searchParams.get('s')! };
  }
  const responseOf = (sid: string, kc = kubeconfig) =>
    bindingResponse({ sid, issuer: 'https://idp', subject: 'u', kubeconfig: kc, group: 'g.io', resource: 'rs', permissionClaims: [] });

  it('answers junk at its callback 400 and keeps waiting for the real response', async () => {
    const { done, callback, sid } = await started();
    const junk = [
      `${callback}?response=not-base64-json`,
      `${callback}?response=${Buffer.from('{"kind":"Other"}').toString('base64')}`,
      `${callback}?response=${Buffer.from('[1,2]').toString('base64')}`,
      `${callback}?other=1`,
    ];
    for (const u of junk) {
      const page = await get(u);
      expect(page.status, u).toBe(400);
      expect(page.body).not.toContain('<script');
    }
    const page = await get(responseRedirect(callback, responseOf(sid)));
    expect(page.status).toBe(200);
    expect((await done).namespace).toBe('cluster-a');
  });

  it('refuses a response whose kubeconfig runs a program, naming the field; the program never runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubectl-bind-exec-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const marker = join(dir, 'ran');
    const evil = kubeconfig.replace(
      '{token: t}',
      `{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "touch ${marker}"]}}`,
    );
    const { done, callback, sid } = await started();
    const page = await get(responseRedirect(callback, responseOf(sid, evil)));
    expect(page.status).toBe(400);
    expect(page.body).toContain('users[default].user.exec runs a program on this machine');
    await expect(done).rejects.toMatchObject({ message: expect.stringContaining('users[default].user.exec') });
    expect(existsSync(marker)).toBe(false);
  });
});
