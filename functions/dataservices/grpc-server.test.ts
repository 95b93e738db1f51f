import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcError, GrpcStatus, newGrpcServer, percentEncode, type GrpcServer, type UnaryHandler } from './grpc-server';

// The server against grpc-js's client, another implementation of the protocol (the Go client runs it in test/render,
// test/cluster/crossplane-v1.test.ts and bench/function).
const ECHO = '/test.Echo/Echo';
const logger = pino({ level: 'silent' });
const bytes = (b: Buffer) => b;

function call(
  client: grpc.Client,
  path: string,
  body: Buffer,
  o: grpc.CallOptions = {},
): Promise<{ ok: true; body: Buffer } | { ok: false; code: number; details: string }> {
  return new Promise((resolve) =>
    client.makeUnaryRequest(path, bytes, bytes, body, new grpc.Metadata(), o, (err, rsp) =>
      resolve(err ? { ok: false, code: err.code, details: err.details } : { ok: true, body: rsp as Buffer }),
    ),
  );
}

describe('newGrpcServer', () => {
  let server: GrpcServer;
  let client: grpc.Client;
  let authorized = 0;
  const release: (() => void)[] = [];
  const methods: Record<string, UnaryHandler> = {
    [ECHO]: async (req) => Buffer.concat([Buffer.from('echo:'), req]),
    '/test.Echo/Fail': async (req) => {
      throw new GrpcError(GrpcStatus.UNAUTHENTICATED, Buffer.from(req).toString('utf8'));
    },
    '/test.Echo/Throw': async () => {
      throw new Error('handler broke');
    },
    '/test.Echo/Wait': (req) => new Promise((resolve) => release.push(() => resolve(req))),
  };
  beforeAll(async () => {
    server = newGrpcServer({
      methods,
      logger,
      maxMessageBytes: 1024,
      authorize: () => {
        authorized++;
        return undefined;
      },
    });
    const port = await server.listen('127.0.0.1', 0);
    client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    client?.close();
    await server?.close(1000);
  });

  it('answers unary calls with the handler’s bytes, the connection judged once', async () => {
    const before = authorized;
    for (const text of ['a', '', 'x'.repeat(1000)]) {
      const got = await call(client, ECHO, Buffer.from(text));
      expect(got).toEqual({ ok: true, body: Buffer.from(`echo:${text}`) });
    }
    expect(authorized - before).toBeLessThanOrEqual(1);
  });

  it('ends calls with the status and message a handler gives, non-ASCII and % kept', async () => {
    const message = 'kein Zertifikat für 100% — ✓\nzweite Zeile';
    expect(await call(client, '/test.Echo/Fail', Buffer.from(message))).toEqual({
      ok: false,
      code: grpc.status.UNAUTHENTICATED,
      details: message,
    });
    expect(await call(client, '/test.Echo/Throw', Buffer.alloc(0))).toEqual({
      ok: false,
      code: grpc.status.UNKNOWN,
      details: 'handler broke',
    });
  });

  it('refuses an unknown method, an oversized message and a compressed one, naming why', async () => {
    expect(await call(client, '/test.Echo/Nope', Buffer.alloc(1))).toEqual({
      ok: false,
      code: grpc.status.UNIMPLEMENTED,
      details: 'unknown method /test.Echo/Nope',
    });
    expect(await call(client, ECHO, Buffer.alloc(2000))).toEqual({
      ok: false,
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'received message larger than max (2000 vs. 1024)',
    });
    const gzip = new grpc.Client(client.getChannel().getTarget().replace(/^dns:/, ''), grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': 2,
    });
    try {
      const got = await call(gzip, ECHO, Buffer.from('y'.repeat(500)));
      expect(got).toMatchObject({ ok: false, code: grpc.status.UNIMPLEMENTED });
      expect(got.ok || got.details).toMatch(/compressed messages are not accepted \(grpc-encoding gzip\)/);
    } finally {
      gzip.close();
    }
    // Still serving on the same connection.
    expect(await call(client, ECHO, Buffer.from('b'))).toEqual({ ok: true, body: Buffer.from('echo:b') });
  });

  it('refuses what is not gRPC with HTTP 415', async () => {
    const s = http2.connect(`http://${client.getChannel().getTarget().replace(/^dns:/, '')}`);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = s.request({ ':method': 'GET', ':path': ECHO });
        req.on('response', (h) => resolve(Number(h[':status'])));
        req.on('error', reject);
        req.resume();
        req.end();
      });
      expect(status).toBe(415);
    } finally {
      s.close();
    }
  });

  it('outlives a client whose deadline passed, and answers the next call', async () => {
    const got = await call(client, '/test.Echo/Wait', Buffer.from('late'), { deadline: Date.now() + 200 });
    expect(got).toMatchObject({ ok: false, code: grpc.status.DEADLINE_EXCEEDED });
    release.splice(0).forEach((r) => r()); // the handler ends after its stream is gone: its answer is dropped
    expect(await call(client, ECHO, Buffer.from('c'))).toEqual({ ok: true, body: Buffer.from('echo:c') });
  });

  it('percent-encodes what grpc-message may not carry, and only that', () => {
    expect(percentEncode('plain text: ok!')).toBe('plain text: ok!');
    expect(percentEncode('100%\n€')).toBe('100%25%0A%E2%82%AC');
  });
});

it('close lets a running call finish and refuses new connections', async () => {
  const release: (() => void)[] = [];
  const server = newGrpcServer({
    methods: { [ECHO]: (req) => new Promise((resolve) => release.push(() => resolve(req))) },
    logger,
  });
  const port = await server.listen('127.0.0.1', 0);
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    const running = call(client, ECHO, Buffer.from('in flight'));
    await expect.poll(() => release.length).toBe(1);
    const closed = server.close(5000);
    release[0]!();
    expect(await running).toEqual({ ok: true, body: Buffer.from('in flight') });
    await closed;
    await expect(
      new Promise((resolve, reject) => net.connect(port, '127.0.0.1').on('connect', resolve).on('error', reject)),
    ).rejects.toThrow(/ECONNREFUSED/);
  } finally {
    client.close();
  }
});
