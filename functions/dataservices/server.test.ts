import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Severity } from '@crossplane-org/function-sdk-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../test/support/catalog';
import { buildFunctionBundle } from './build';
import { functionClient, startFunctionProcess, type FunctionProcess } from './client';
import { runFunction } from './fn';
import { compositeOf, inputOf, requestOf } from './fixtures';
import { DEFAULT_TLS_CERTS_DIR, parseServerArgs, serverCredentials } from './server';

describe('parseServerArgs', () => {
  it.each<{ name: string; argv: string[]; env?: Record<string, string>; want: object }>([
    { name: 'defaults', argv: [], want: { address: '0.0.0.0:9443', insecure: false, tlsCertsDir: DEFAULT_TLS_CERTS_DIR, metricsAddress: '0.0.0.0:8080', debug: false } },
    { name: 'TLS dir from the environment', argv: [], env: { TLS_SERVER_CERTS_DIR: '/certs' }, want: { tlsCertsDir: '/certs' } },
    { name: '--tls-certs-dir over the environment', argv: ['--tls-certs-dir', '/a'], env: { TLS_SERVER_CERTS_DIR: '/certs' }, want: { tlsCertsDir: '/a' } },
    { name: 'the SDK spelling', argv: ['--tls-server-certs-dir', '/b'], want: { tlsCertsDir: '/b' } },
    { name: 'insecure and addresses', argv: ['--insecure', '--address', ':9999', '--metrics-address', ''], want: { insecure: true, address: ':9999', metricsAddress: '' } },
  ])('$name', ({ argv, env, want }) => expect(parseServerArgs(argv, env ?? {})).toMatchObject(want));

  it('refuses unknown flags', () => expect(() => parseServerArgs(['--tls'])).toThrow());
});

it('does not fall back to insecure when the certificates are missing', () => {
  expect(() => serverCredentials({ insecure: false, tlsCertsDir: '/nonexistent' })).toThrow(/cannot load TLS certificates from \/nonexistent: .*pass --insecure/);
});

describe('the bundled function', () => {
  const dir = mkdtempSync(join(tmpdir(), 'klutch-fn-'));
  let fp: FunctionProcess;
  let apis: Api[];

  beforeAll(async () => {
    apis = await loadCatalog();
    // Runs from an empty directory: nothing from node_modules is reachable.
    const bundle = join(dir, 'isolated', 'function.mjs');
    mkdirSync(join(dir, 'isolated'), { recursive: true });
    await buildFunctionBundle(bundle);
    writeFileSync(join(dir, 'isolated', 'package.json'), '{"type":"module"}');
    fp = await startFunctionProcess(bundle);
  }, 120_000);
  afterAll(async () => {
    await fp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers RunFunction over gRPC exactly as in process', async () => {
    const pg = apis.find((a) => a.name === 'postgresql') as Api;
    const req = () => requestOf(inputOf(pg, 'a9s'), compositeOf(pg, 'a9s', { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { maxConnections: 100 } }));
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

  it('serves /healthz and counts runs in /metrics', async () => {
    expect((await fetch(`http://127.0.0.1:${fp.metricsPort}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${fp.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/function_run_function_total\{result="ok"\} [1-9]/);
    expect(metrics).toContain('function_run_function_duration_seconds_bucket');
  });

  it('logs JSON and exits 0 on SIGTERM', async () => {
    expect(fp.logs.some((l) => l.msg === 'serving RunFunction' && typeof l.level === 'number')).toBe(true);
    expect(await fp.stop()).toBe(0);
  });
});
