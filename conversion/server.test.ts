import { request } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_ANNOTATION } from '../lib/conversion';
import { createCa } from '../harness/cluster/pki';
import { versionedBackup, VERSIONED_GROUP } from '../test/support/versioned-api';
import { startConversionServer } from './server';
import { conversionTable } from './table';

const PATH = `/convert/xbackups.${VERSIONED_GROUP}`;
let server: Server;
let ca: string;

beforeAll(async () => {
  const authority = await createCa();
  const pair = await authority.issue({ commonName: 'conversion', ips: ['127.0.0.1'] });
  ca = authority.cert;
  server = await startConversionServer({ table: conversionTable([versionedBackup()], 'v1'), ...pair }, 0, '127.0.0.1');
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** What the API server does: POST over TLS, verifying the server against the XRD's caBundle. */
function call(path: string, body: unknown, method = 'POST'): Promise<{ code: number; body: any }> {
  const port = (server.address() as AddressInfo).port;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text }));
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

const review = (desiredAPIVersion: string, ...objects: Record<string, unknown>[]) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid: 'u-1', desiredAPIVersion, objects },
});
const claim = (version: string, spec: Record<string, unknown>, annotations?: Record<string, string>) => ({
  apiVersion: `${VERSIONED_GROUP}/${version}`,
  kind: 'Backup',
  metadata: { name: 'nightly', namespace: 'team-a', ...(annotations ? { annotations } : {}) },
  spec,
});

describe('the conversion server', () => {
  it('converts a v1 claim to v2 and back to the same object, keeping what v2 cannot hold', async () => {
    const v1 = claim('v1', { instance: 'pg', serviceInstanceType: 'postgresql', note: 'before the migration' });
    const up = await call(PATH, review(`${VERSIONED_GROUP}/v2`, v1));
    expect(up.body.response.result.status).toBe('Success');
    const [v2] = up.body.response.convertedObjects;
    expect(v2.apiVersion).toBe(`${VERSIONED_GROUP}/v2`);
    expect(v2.spec).toEqual({ instanceRef: 'pg', serviceInstanceType: 'postgresql', retention: '7d' });
    expect(JSON.parse(v2.metadata.annotations[KEPT_ANNOTATION])).toEqual({ 'spec.note': 'before the migration' });
    const down = await call(PATH, review(`${VERSIONED_GROUP}/v1`, v2));
    expect(down.body.response.convertedObjects).toEqual([v1]);
  });

  it('refuses a review whose result the target version would not accept: a value smuggled in the kept annotation', async () => {
    const v1 = claim('v1', { instance: 'pg', serviceInstanceType: 'postgresql' }, { [KEPT_ANNOTATION]: '{"spec.retention":"forever"}' });
    const r = await call(PATH, review(`${VERSIONED_GROUP}/v2`, v1));
    expect(r.body.response).toEqual({
      uid: 'u-1',
      result: {
        status: 'Failure',
        message: expect.stringMatching(
          /^Backup team-a\/nightly: spec\.retention must match pattern "\^\[0-9\]\+d\$" in v2 .*fix the value/,
        ),
      },
      convertedObjects: [],
    });
  });

  it('refuses a kind or group it does not convert, and names what it converts', async () => {
    const other = { ...claim('v1', { instance: 'pg', serviceInstanceType: 'postgresql' }), kind: 'ServiceBinding' };
    expect((await call(PATH, review(`${VERSIONED_GROUP}/v2`, other))).body.response.result.message).toBe(
      'this webhook converts XBackup and Backup, not ServiceBinding',
    );
    const group = await call(PATH, review('anynines.com/v2', claim('v1', { instance: 'pg', serviceInstanceType: 'postgresql' })));
    expect(group.body.response.result.message).toBe(`this webhook converts ${VERSIONED_GROUP}, not anynines.com/v2`);
  });

  it('answers what is not a review with the reason, and an unknown path with the paths it serves', async () => {
    expect(await call(PATH, 'not json')).toEqual({ code: 400, body: 'the body is not JSON\n' });
    expect(await call(PATH, { kind: 'Pod' })).toEqual({ code: 400, body: 'the body is not a ConversionReview with a request\n' });
    expect(await call(PATH, '', 'GET')).toEqual({ code: 405, body: 'POST a ConversionReview\n' });
    expect(await call('/convert/xwidgets.example.com', review('example.com/v2'))).toEqual({
      code: 404,
      body: `no API converts at /convert/xwidgets.example.com; the table has ${PATH}\n`,
    });
    expect(await call('/healthz', '', 'GET')).toEqual({ code: 200, body: 'ok\n' });
  });
});
