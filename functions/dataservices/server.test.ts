import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { FunctionRunnerServiceService, RunFunctionRequest, Severity } from '@crossplane-org/function-sdk-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog, ROOT } from '../../harness/crossplane/catalog';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { functionClient, startFunctionProcess, type FunctionProcess } from '../../harness/parts/function-process';
import { runFunction } from './fn';
import { compositeOf, inputOf, requestOf } from '../../harness/crossplane/function-requests';
import { DEFAULT_TLS_CERTS_DIR, FUNCTION_FLAGS, FUNCTION_HELP, parseServerArgs, serverCredentials } from './server';
import { manual, undocumentedFlags } from '../../test/support/docs';

describe('parseServerArgs', () => {
  it.each<{ name: string; argv: string[]; env?: Record<string, string>; want: object }>([
    {
      name: 'defaults',
      argv: [],
      want: { address: '0.0.0.0:9443', insecure: false, tlsCertsDir: DEFAULT_TLS_CERTS_DIR, metricsAddress: '0.0.0.0:8080', debug: false },
    },
    { name: 'TLS dir from the environment', argv: [], env: { TLS_SERVER_CERTS_DIR: '/certs' }, want: { tlsCertsDir: '/certs' } },
    {
      name: '--tls-certs-dir over the environment',
      argv: ['--tls-certs-dir', '/a'],
      env: { TLS_SERVER_CERTS_DIR: '/certs' },
      want: { tlsCertsDir: '/a' },
    },
    { name: 'the SDK spelling', argv: ['--tls-server-certs-dir', '/b'], want: { tlsCertsDir: '/b' } },
    {
      name: 'insecure and addresses',
      argv: ['--insecure', '--address', ':9999', '--metrics-address', ''],
      want: { insecure: true, address: ':9999', metricsAddress: '' },
    },
  ])('$name', ({ argv, env, want }) => expect(parseServerArgs(argv, env ?? {})).toMatchObject(want));

  it('refuses unknown flags, naming them', () => expect(() => parseServerArgs(['--tls'])).toThrow("Unknown option '--tls'"));

  it('answers --help with every flag and the variable it reads', () => {
    expect(parseServerArgs(['--help'])).toBe('help');
    for (const f of FUNCTION_FLAGS.flags) expect(FUNCTION_HELP).toContain(`--${f.name}`);
    expect(FUNCTION_HELP).toContain('env TLS_SERVER_CERTS_DIR');
  });

  it('answers --version', () => {
    expect(parseServerArgs(['--version'])).toBe('version');
    expect(FUNCTION_HELP).toContain('--version');
  });

  it('documents every flag with its variable and default in docs/function.md', () => {
    expect(undocumentedFlags(manual('function'), FUNCTION_FLAGS)).toEqual([]);
  });
});

it('does not fall back to insecure when the certificates are missing', () => {
  expect(() => serverCredentials({ insecure: false, tlsCertsDir: '/nonexistent' })).toThrow(
    /cannot load TLS certificates from \/nonexistent: .*pass --insecure/,
  );
});

const dir = mkdtempSync(join(tmpdir(), 'klutch-fn-'));
// Runs from an empty directory: nothing from node_modules is reachable.
const bundle = join(dir, 'isolated', 'function.mjs');
let apis: Api[];
beforeAll(async () => {
  apis = await loadCatalog();
  mkdirSync(join(dir, 'isolated'), { recursive: true });
  copyFileSync(await bundleDeployable(ROOT, deployable('function')), bundle);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pgRequest = () => {
  const pg = apis.find((a) => a.name === 'postgresql') as Api;
  return requestOf(
    inputOf(pg, 'a9s'),
    compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { maxConnections: 100 } }),
  );
};

describe('the bundled function', () => {
  let fp: FunctionProcess;
  beforeAll(async () => {
    fp = await startFunctionProcess(bundle);
  }, 60_000);
  afterAll(async () => {
    await fp?.stop();
  });

  it('answers RunFunction over gRPC exactly as in process', async () => {
    const req = pgRequest;
    const c = functionClient(`127.0.0.1:${fp.port}`);
    try {
      const got = await c.run(req());
      expect(got.results.filter((r) => r.severity === Severity.SEVERITY_FATAL)).toEqual([]);
      expect(got.meta?.tag).toBe('tag-1');
      expect(got.desired?.resources['a9s-postgresql']?.resource).toEqual(runFunction(req()).desired?.resources['a9s-postgresql']?.resource);
    } finally {
      c.close();
    }
  });

  it('survives random and truncated wire bytes, then still answers', async () => {
    const raw = new grpc.Client(`127.0.0.1:${fp.port}`, grpc.credentials.createInsecure());
    const good = Buffer.from(RunFunctionRequest.encode(pgRequest()).finish());
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const payloads = [
      ...Array.from({ length: 40 }, () => good.subarray(0, Math.floor(rand() * good.length))),
      ...Array.from({ length: 40 }, () => Buffer.from(Array.from({ length: Math.floor(rand() * 512) }, () => Math.floor(rand() * 256)))),
    ];
    let answered = 0;
    let refused = 0;
    for (const p of payloads) {
      await new Promise<void>((resolve) => {
        raw.makeUnaryRequest(
          FunctionRunnerServiceService.runFunction.path,
          (b: Buffer) => b,
          (b: Buffer) => b,
          p,
          (err) => {
            if (err) refused++;
            else answered++;
            resolve();
          },
        );
      });
    }
    raw.close();
    expect(answered + refused).toBe(payloads.length);
    expect(answered).toBeGreaterThan(0);
    const c = functionClient(`127.0.0.1:${fp.port}`);
    try {
      expect((await c.run(pgRequest())).meta?.tag).toBe('tag-1');
    } finally {
      c.close();
    }
  });

  it('serves /healthz, /readyz and counts runs in /metrics, on the probe listener of every process (lib/probes.ts)', async () => {
    const get = async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${fp.metricsPort}${path}`);
      return { code: r.status, body: await r.text() };
    };
    expect(await get('/healthz')).toEqual({ code: 200, body: 'ok\n' });
    expect(await get('/readyz')).toEqual({ code: 200, body: 'ok\n' });
    expect(await get('/nope')).toEqual({ code: 404, body: 'not found: use /healthz, /readyz or /metrics\n' });
    const metrics = await (await fetch(`http://127.0.0.1:${fp.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/klutch_function_run_function_total\{result="ok"\} [1-9]/);
    expect(metrics).toContain('klutch_function_run_function_duration_seconds_bucket');
  });

  it('logs JSON (the level a word, the time ISO 8601) and exits 0 on SIGTERM', async () => {
    expect(fp.logs.find((l) => l.msg === 'serving RunFunction')).toMatchObject({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(await fp.stop()).toBe(0);
  });
});

describe('the bundled function with mTLS', () => {
  const certs = join(dir, 'tls');
  const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: certs, stdio: 'pipe' });
  let fp: FunctionProcess;
  const creds = (withClientCert: boolean) =>
    grpc.credentials.createSsl(
      readFileSync(join(certs, 'ca.crt')),
      withClientCert ? readFileSync(join(certs, 'client.key')) : null,
      withClientCert ? readFileSync(join(certs, 'client.crt')) : null,
    );

  beforeAll(async () => {
    mkdirSync(certs, { recursive: true });
    ssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=test-ca']);
    for (const who of ['tls', 'client']) {
      ssl([
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${who}.key`,
        '-out',
        `${who}.csr`,
        '-subj',
        `/CN=${who === 'tls' ? 'localhost' : 'crossplane'}`,
      ]);
      writeFileSync(
        join(certs, `${who}.ext`),
        who === 'tls' ? 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' : 'extendedKeyUsage=clientAuth\n',
      );
      ssl([
        'x509',
        '-req',
        '-in',
        `${who}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${who}.crt`,
        '-days',
        '1',
        '-extfile',
        `${who}.ext`,
      ]);
    }
    // Certificates as Crossplane makes them (internal/initializer/tls.go): the client's subject is its CA's, and it has
    // no key identifiers, which OpenSSL takes for a self-signed certificate.
    ssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'xp-ca.key',
      '-out',
      'xp-ca.crt',
      '-days',
      '1',
      '-subj',
      '/O=Crossplane/CN=Crossplane',
    ]);
    ssl([
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'xp-client.key',
      '-out',
      'xp-client.csr',
      '-subj',
      '/O=Crossplane/CN=Crossplane',
    ]);
    writeFileSync(join(certs, 'xp-client.ext'), 'extendedKeyUsage=clientAuth\nauthorityKeyIdentifier=none\nsubjectKeyIdentifier=none\n');
    ssl([
      'x509',
      '-req',
      '-in',
      'xp-client.csr',
      '-CA',
      'xp-ca.crt',
      '-CAkey',
      'xp-ca.key',
      '-CAcreateserial',
      '-out',
      'xp-client.crt',
      '-days',
      '1',
      '-extfile',
      'xp-client.ext',
    ]);
    // ca.crt holds both CAs, as a bundle may.
    writeFileSync(join(certs, 'ca.crt'), readFileSync(join(certs, 'ca.crt'), 'utf8') + readFileSync(join(certs, 'xp-ca.crt'), 'utf8'));
    // The certificates' directory from the environment, as Crossplane's package manager sets it.
    fp = await startFunctionProcess(bundle, ['--metrics-address', ''], {
      insecure: false,
      env: { ...process.env, TLS_SERVER_CERTS_DIR: certs },
    });
  }, 60_000);
  afterAll(async () => {
    await fp?.stop();
  });

  it('answers a client with a certificate signed by the CA', async () => {
    const c = functionClient(`127.0.0.1:${fp.port}`, creds(true), { 'grpc.ssl_target_name_override': 'localhost' });
    try {
      expect((await c.run(pgRequest())).meta?.tag).toBe('tag-1');
    } finally {
      c.close();
    }
  });

  it("answers Crossplane's own client certificate, whose subject is its CA's (OpenSSL alone refuses it as self-signed)", async () => {
    const c = functionClient(
      `127.0.0.1:${fp.port}`,
      grpc.credentials.createSsl(
        readFileSync(join(certs, 'ca.crt')),
        readFileSync(join(certs, 'xp-client.key')),
        readFileSync(join(certs, 'xp-client.crt')),
      ),
      { 'grpc.ssl_target_name_override': 'localhost' },
    );
    try {
      expect((await c.run(pgRequest())).meta?.tag).toBe('tag-1');
    } finally {
      c.close();
    }
  });

  it('refuses a client whose certificate no CA of ca.crt signed, naming why', async () => {
    ssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'other.key',
      '-out',
      'other.crt',
      '-days',
      '1',
      '-subj',
      '/CN=crossplane',
    ]);
    const c = functionClient(
      `127.0.0.1:${fp.port}`,
      grpc.credentials.createSsl(
        readFileSync(join(certs, 'ca.crt')),
        readFileSync(join(certs, 'other.key')),
        readFileSync(join(certs, 'other.crt')),
      ),
      { 'grpc.ssl_target_name_override': 'localhost' },
    );
    try {
      await expect(c.run(pgRequest())).rejects.toThrow(/UNAUTHENTICATED.*not signed by a CA of ca\.crt/);
    } finally {
      c.close();
    }
  });

  it('refuses a client without a certificate, and a plaintext client', async () => {
    for (const cr of [creds(false), grpc.credentials.createInsecure()]) {
      const c = functionClient(`127.0.0.1:${fp.port}`, cr, { 'grpc.ssl_target_name_override': 'localhost' });
      try {
        await expect(c.run(pgRequest())).rejects.toThrow();
      } finally {
        c.close();
      }
    }
  });

  it('will not start without certificates unless --insecure', async () => {
    await expect(
      startFunctionProcess(bundle, ['--metrics-address', '', '--tls-certs-dir', join(dir, 'none')], { insecure: false }),
    ).rejects.toThrow(/exited with 1/);
  });
});
