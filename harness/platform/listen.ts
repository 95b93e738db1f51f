/**
 * A listener on the host's 127.0.0.1:`port` piping each connection to 127.0.0.1:`to()` (a node.forward port), so a
 * public URL can be fixed before what serves it (a Service inside a node) exists: the backend's public URL.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export async function listenAt(port: number, to: () => number): Promise<() => Promise<void>> {
  const open = new Set<Socket>();
  const server: Server = createServer((c) => {
    const u = createConnection({ host: '127.0.0.1', port: to() });
    for (const s of [c, u]) {
      open.add(s);
      s.once('close', () => open.delete(s));
      s.on('error', () => (s === c ? u : c).destroy());
    }
    c.pipe(u);
    u.pipe(c);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return async () => {
    for (const s of open) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
}
