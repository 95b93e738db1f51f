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
});
