/**
 * The function's gRPC server: unary calls over Node's own HTTP/2 (nghttp2 frames, flow control, PING, GOAWAY), the
 * messages read and written by the caller (codec.ts for RunFunction). Neither grpc-js nor Connect: the same server
 * answering empty responses cost 145 µs of CPU and 80 MiB peak with grpc-js, 390 µs and 89 MiB with
 * @connectrpc/connect-node, 83 µs and 75 MiB here (docs/decisions/function-performance.md, third pass).
 *
 * What gRPC adds to HTTP/2 for a unary call, and all this file does (the protocol's PROTOCOL-HTTP2.md): a POST to
 * `/<service>/<method>` with `content-type: application/grpc`; the body one message behind a 5-byte prefix
 * (compressed flag, big-endian length); the answer `:status 200` with the message in the same framing and the
 * status in trailers (`grpc-status`, `grpc-message` percent-encoded), or only trailers for an error. Compression
 * is not offered (the response sends no grpc-accept-encoding, so clients do not compress; Crossplane does not).
 * Deadlines are the client's: it resets the stream when one passes, and the answer is then dropped.
 */
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';

/** The gRPC status codes this server answers with. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** An error that ends a call with its gRPC status (any other error ends it UNKNOWN). */
export class GrpcError extends Error {
  constructor(
    readonly code: GrpcStatusCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A unary method: the request's bytes in, the response's bytes out. */
export type UnaryHandler = (request: Uint8Array) => Promise<Uint8Array>;

/** gRPC's default limit on a received message, which grpc-js and grpc-go apply too. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** The prefix of every message: compressed flag (1 byte), length (4 bytes, big-endian). */
const PREFIX = 5;

export interface GrpcServerOptions {
  /** Handlers by path, `/<package>.<Service>/<Method>`. */
  readonly methods: Readonly<Record<string, UnaryHandler>>;
  readonly logger: Logger;
  /** TLS: the server's pair; clients are asked for a certificate, which `authorize` judges. Plaintext without. */
  readonly tls?: { readonly key: Buffer; readonly cert: Buffer; readonly ca: Buffer };
  /** Why a connection's peer may not call (undefined: it may); asked once per connection. */
  readonly authorize?: (session: http2.ServerHttp2Session) => string | undefined;
  /** @default MAX_MESSAGE_BYTES */
  readonly maxMessageBytes?: number;
}

export interface GrpcServer {
  /** Listens on `host:port` (port 0: any) and resolves the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting connections, lets running calls finish (GOAWAY), and cuts what is left after `graceMs`. */
  close(graceMs: number): Promise<void>;
}

/** A gRPC server (not yet listening) answering unary calls with `o.methods`. */
export function newGrpcServer(o: GrpcServerOptions): GrpcServer {
  const max = o.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  // nghttp2's budget for a session's buffered frames (MB): 16 calls of the largest message must fit, where Node's
  // default of 10 would answer ENHANCE_YOUR_CALM.
  const http = { maxSessionMemory: Math.ceil((16 * (max + PREFIX)) / 1e6) + 10 };
  const server = o.tls
    ? http2.createSecureServer({ ...http, key: o.tls.key, cert: o.tls.cert, ca: o.tls.ca, requestCert: true, rejectUnauthorized: false })
    : http2.createServer(http);
  const verdicts = new WeakMap<http2.ServerHttp2Session, string | undefined>();
  const verdict = (session: http2.ServerHttp2Session): string | undefined => {
    if (!o.authorize) return undefined;
    if (!verdicts.has(session)) verdicts.set(session, o.authorize(session));
    return verdicts.get(session);
  };
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  // A peer that breaks its connection ends it, not the process.
  server.on('sessionError', (e) => o.logger.debug({ err: e }, 'HTTP/2 session error'));

  server.on('stream', (stream, headers) => {
    // A reset by the peer (its deadline, its shutdown) ends the call; nothing is left to answer.
    stream.on('error', (e) => o.logger.debug({ err: e }, 'gRPC stream error'));
    const contentType = headers['content-type'] ?? '';
    if (headers[':method'] !== 'POST' || !/^application\/grpc(\+proto)?(;|$)/.test(contentType)) {
      stream.respond({ ':status': 415, 'content-type': 'text/plain' }, { endStream: false });
      stream.end(`gRPC only: POST with content-type application/grpc, not ${headers[':method']} ${contentType || '(none)'}\n`);
      return;
    }
    const path = String(headers[':path']);
    const handler = o.methods[path];
    if (!handler) return fail(stream, GrpcStatus.UNIMPLEMENTED, `unknown method ${path}`);
    const refused = verdict(stream.session as http2.ServerHttp2Session);
    if (refused) return fail(stream, GrpcStatus.UNAUTHENTICATED, refused);
    readMessage(stream, headers, max)
      .then(async (request) => {
        const response = await handler(request);
        if (response.length > max)
          throw new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `response of ${response.length} bytes is over the limit of ${max}`);
        answer(stream, response);
      })
      .catch((e: unknown) => {
        if (!(e instanceof GrpcError)) o.logger.error({ err: e, path }, 'gRPC call failed');
        fail(stream, e instanceof GrpcError ? e.code : GrpcStatus.UNKNOWN, (e as Error).message ?? String(e));
      });
  });

  return {
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      }),
    close: (graceMs) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          for (const s of sessions) s.destroy();
        }, graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        for (const s of sessions) s.close();
      }),
  };
}

/** The one message of a unary call's body, unprefixed; refuses more, less, compressed or oversized ones. */
function readMessage(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, max: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (chunk: Buffer) => {
      if (bytes < PREFIX && bytes + chunk.length >= PREFIX) {
        // Judged on the prefix, before the rest is buffered.
        const head = Buffer.concat([...chunks, chunk]);
        const problem = prefixProblem(head, headers, max);
        if (problem) {
          stream.off('data', onData);
          stream.off('end', onEnd);
          return reject(problem);
        }
      }
      chunks.push(chunk);
      bytes += chunk.length;
    };
    const onEnd = () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      if (body.length === 0) return reject(new GrpcError(GrpcStatus.INTERNAL, 'the call carries no request message'));
      const length = body.length >= PREFIX ? body.readUInt32BE(1) : -1;
      if (length < 0 || body.length < PREFIX + length)
        return reject(new GrpcError(GrpcStatus.INTERNAL, `the request message is truncated (${body.length} bytes)`));
      if (body.length > PREFIX + length)
        return reject(new GrpcError(GrpcStatus.INTERNAL, 'more than one request message for a unary call'));
      resolve(body.subarray(PREFIX));
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    // Reset before its end (the client's deadline or shutdown): settles the call, which then answers nothing.
    stream.once('close', () => reject(new GrpcError(GrpcStatus.CANCELLED, 'the client cancelled the call')));
  });
}

function prefixProblem(head: Buffer, headers: http2.IncomingHttpHeaders, max: number): GrpcError | undefined {
  if ((head[0] as number) & 1)
    return new GrpcError(
      GrpcStatus.UNIMPLEMENTED,
      `compressed messages are not accepted (grpc-encoding ${String(headers['grpc-encoding'] ?? 'none')}); send them uncompressed`,
    );
  const length = head.readUInt32BE(1);
  if (length > max) return new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `received message larger than max (${length} vs. ${max})`);
  return undefined;
}

/** The response message, then status OK in trailers. */
function answer(stream: http2.ServerHttp2Stream, message: Uint8Array): void {
  if (stream.destroyed || stream.closed) return;
  const body = Buffer.allocUnsafe(PREFIX + message.length);
  body[0] = 0;
  body.writeUInt32BE(message.length, 1);
  body.set(message, PREFIX);
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(body);
}

/** Ends a call with a status and message, as trailers only. */
function fail(stream: http2.ServerHttp2Stream, code: GrpcStatusCode, message: string): void {
  if (stream.destroyed || stream.closed) return;
  // Headers already out (answer() failed midway): only a reset is left to say so.
  if (stream.headersSent) return void stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': percentEncode(message) },
    { endStream: true },
  );
  // The peer may still be sending a body nobody reads: done with the stream.
  stream.resume();
}

/** grpc-message as the protocol wants it: bytes outside printable ASCII, and '%', percent-encoded (UTF-8). */
export function percentEncode(message: string): string {
  return message.replace(/[^\x20-\x24\x26-\x7e]+/g, (s) =>
    Array.from(Buffer.from(s, 'utf8'), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}
