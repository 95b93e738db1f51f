import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Browser } from './browser';

/**
 * A server that answers a connection's first request with keep-alive and resets the connection on its second, as a
 * server whose keep-alive timeout closes a socket just as the client reuses it.
 */
let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy(); // the browser keeps its socket alive: close() would wait for it
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

describe('Browser', () => {
  it('sends a GET again on a new connection when a reused keep-alive socket is reset before any answer', async () => {
    let requests = 0;
    server = createServer((s) => {
      sockets.push(s);
      let seen = 0;
      s.on('data', () => {
        requests++;
        if (++seen > 1) return void s.resetAndDestroy();
        s.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const b = new Browser();
    expect((await b.get(url)).status).toBe(200);
    expect((await b.get(url)).status).toBe(200);
    // The second GET was reset on the kept socket and answered on a new one.
    expect({ connections: sockets.length, requests }).toEqual({ connections: 2, requests: 3 });
  });

  it('loads the page again when a connection is cut before TLS completes, as a Service whose Pod goes cuts it', async () => {
    const { createCa } = await import('../cluster/pki');
    const { createServer: createTls } = await import('node:tls');
    const ca = await createCa('browser test CA');
    const cert = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
    const tls = createTls({ key: cert.key, cert: cert.cert }, (s) => {
      s.on('error', () => undefined);
      s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
    });
    let cut = 0;
    // The first connection is cut before any TLS byte, as a forwarder whose upstream refused; the next go through.
    server = createServer((s) => {
      sockets.push(s);
      if (cut++ < 1) return void s.destroy();
      tls.emit('connection', s);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/export`;
    expect((await new Browser({ ca: [ca.cert] }).get(url)).body).toBe('ok');
    expect(cut).toBe(2);
  });
});
