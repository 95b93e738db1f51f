import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from './processes';

describe('freePorts', () => {
  it('hands out distinct ports below the ephemeral range, which a listener can bind at once', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await freePorts(20);
    expect(new Set(ports).size).toBe(20);
    for (const p of ports) expect(p).toBeLessThan(low);
    const s = createServer();
    await new Promise<void>((resolve, reject) => (s.once('error', reject), s.listen(ports[0], '127.0.0.1', () => resolve())));
    await new Promise((r) => s.close(r));
  });
});
