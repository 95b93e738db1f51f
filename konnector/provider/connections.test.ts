import { describe, expect, it } from 'vitest';
import { Connections, kubeConfigOf, type Connection, type ConnectionSource } from './connections';

class Fake implements Connection {
  rotations: string[] = [];
  stopped = false;
  constructor(
    readonly key: string,
    readonly first: string,
  ) {}
  rotate(k: ConnectionSource) {
    this.rotations.push(k.token);
  }
  async stop() {
    this.stopped = true;
  }
}

const src = (token: string, namespace = 'cluster-x', server = 'https://p'): ConnectionSource => ({
  server,
  namespace,
  token,
  yaml: `${server} ${namespace} ${token}`,
});

describe('Connections', () => {
  it('shares one connection among bindings of the same provider and cluster namespace', async () => {
    const made: Fake[] = [];
    const c = new Connections((key, s) => (made.push(new Fake(key, s.token)), made.at(-1)!));
    const a = await c.acquire('ns/a', src('k1'));
    const b = await c.acquire('ns/b', src('k1'));
    expect(a).toBe(b);
    expect(made).toHaveLength(1);
    await c.acquire('ns/c', src('k1', 'cluster-y'));
    expect(made).toHaveLength(2);
  });

  it('rotates credentials in place instead of reconnecting', async () => {
    const c = new Connections((key, s) => new Fake(key, s.token));
    const a = await c.acquire('ns/a', src('token-1'));
    expect(await c.acquire('ns/a', src('token-2'))).toBe(a);
    await c.acquire('ns/b', src('token-2'));
    expect(a.rotations).toEqual(['token-2']);
  });

  it('stops a connection when its last binding leaves, and moves a binding to a new provider', async () => {
    const c = new Connections((key, s) => new Fake(key, s.token));
    const a = await c.acquire('ns/a', src('k'));
    await c.acquire('ns/b', src('k'));
    await c.release('ns/a');
    expect(a.stopped).toBe(false);
    const moved = await c.acquire('ns/b', src('k', 'cluster-z'));
    expect(a.stopped).toBe(true);
    expect(moved).not.toBe(a);
    expect(c.size).toBe(1);
  });

  it('builds the client configuration from the reduced fields only, and reloads it in place', () => {
    const kc = kubeConfigOf({ ...src('t1'), ca: 'PEM', serverName: 'p.internal' });
    expect(kc.getCurrentCluster()).toEqual({
      name: 'provider',
      server: 'https://p',
      skipTLSVerify: false,
      caData: Buffer.from('PEM').toString('base64'),
      tlsServerName: 'p.internal',
    });
    expect(kc.getCurrentUser()).toEqual({ name: 'provider', token: 't1' });
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('cluster-x');
    expect(kubeConfigOf(src('t2'), kc)).toBe(kc);
    expect(kc.getCurrentUser()?.token).toBe('t2');
  });
});
