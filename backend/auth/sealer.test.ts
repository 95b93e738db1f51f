import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hkdfSync } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Key, KeyRing, parseKeys } from './keys';
import { ReplayGuard } from './replay';
import { Sealer } from './sealer';
import { sleep } from '../../lib/abort';

const key = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');

describe('Sealer', () => {
  it('opens what it sealed, for the same purpose only', async () => {
    const keys = parseKeys(key(), 'test');
    const s = new Sealer(() => keys);
    const token = await s.seal('state', { sid: 'a' }, 60_000);
    expect((await s.open('state', token)).sid).toBe('a');
    await expect(s.open('session', token)).rejects.toMatchObject({ reason: 'invalid' });
    expect(token).not.toContain('"sid"'); // encrypted
  });

  it('refuses a changed token, an expired one, and one of a removed key', async () => {
    const [k1, k2] = [key(), key()];
    let current = parseKeys(`${k1}\n`, 't');
    const s = new Sealer(() => current);
    const token = await s.seal('session', { sub: 'x' }, 60_000);
    const flipped = token.slice(0, -3) + (token.endsWith('AAA') ? 'BBB' : 'AAA');
    await expect(s.open('session', flipped)).rejects.toMatchObject({ reason: 'invalid' });
    const short = await s.seal('session', { sub: 'x' }, 1000);
    await sleep(2100);
    await expect(s.open('session', short)).rejects.toMatchObject({ reason: 'expired' });
    current = parseKeys(`${k2}\n${k1}\n`, 't'); // rotated: new key seals, old opens
    expect((await s.open('session', token)).sub).toBe('x');
    current = parseKeys(`${k2}\n`, 't');
    await expect(s.open('session', token)).rejects.toMatchObject({ reason: 'invalid' });
  });
});

describe('keys', () => {
  it('names the bad line and how to make a key', () => {
    expect(() => parseKeys(`${key()}\nshort\n`, '/keys')).toThrow(
      '/keys: line 2 is not a base64 key of 32 or more bytes; make one with `openssl rand -base64 32`',
    );
    expect(() => parseKeys('# only a comment\n', '/keys')).toThrow('holds no key');
  });

  it('re-reads the file when it changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'keys');
    writeFileSync(file, `${key()}\n`);
    const ring = new KeyRing(file);
    const first = ring.current()[0]!.id;
    writeFileSync(file, `${key()}\n${key()}\n`);
    expect(ring.current(Date.now() + 2000)).toHaveLength(2);
    expect(ring.current()[0]!.id).not.toBe(first);
  });
});

describe('ReplayGuard', () => {
  it('lets an id through once until it expires, and stays bounded', () => {
    const g = new ReplayGuard(3);
    expect(g.use('a', 1000, 0)).toBe(true);
    expect(g.use('a', 1000, 10)).toBe(false);
    for (const id of ['b', 'c', 'd', 'e']) g.use(id, 5000, 20);
    expect(g.size).toBeLessThanOrEqual(3);
    expect(g.use('a', 1000, 2000)).toBe(true);
  });
});

describe('Sealer errors', () => {
  it('keeps what it failed on as the cause, and names a key it does not have', async () => {
    const mine = parseKeys(key(), 't');
    const s = new Sealer(() => mine);
    const other = new Sealer(() => parseKeys(key(), 't'));
    const token = await other.seal('state', { sid: 'a' }, 60_000);
    await expect(s.open('state', token)).rejects.toMatchObject({
      reason: 'invalid',
      message: 'sealed with a key this backend does not have (rotated out, or forged)',
    });
    const own = await s.seal('state', { sid: 'a' }, 60_000);
    for (const bad of ['not-a-token', 'a.b.c.d.e', `${own.split('.')[0]}..AAAA.AAAA.AAAA`]) {
      const err = await s.open('state', bad).catch((e: unknown) => e as Error);
      expect(err, bad).toMatchObject({ reason: 'invalid' });
      expect(err.cause, bad).toBeInstanceOf(Error);
    }
  });
});

describe('the sealed format is JWE as jose writes and reads it (dir + A256GCM)', () => {
  // Replicas of the previous version sealed with jose: a rollout must not log anyone out, in either direction.
  const derived = (k: Key, purpose: string) => new Uint8Array(hkdfSync('sha256', k.bytes, '', `klutch-kit bind backend ${purpose}`, 32));

  it('jose opens what the Sealer seals, with the purpose as audience and the expiry', async () => {
    const keys = parseKeys(key(), 't');
    const token = await new Sealer(() => keys).seal('flow', { sid: 'a', nested: { x: ['ü'] } }, 60_000);
    const { payload, protectedHeader } = await jwtDecrypt(token, derived(keys[0]!, 'flow'), { audience: 'flow' });
    expect(protectedHeader).toEqual({ alg: 'dir', enc: 'A256GCM', kid: keys[0]!.id });
    expect(payload).toMatchObject({ sid: 'a', nested: { x: ['ü'] }, aud: 'flow' });
    expect(payload.exp! - payload.iat!).toBe(60);
  });

  it('the Sealer opens what jose sealed, and refuses jose’s for another purpose or past its expiry', async () => {
    const keys = parseKeys(key(), 't');
    const s = new Sealer(() => keys);
    const jose = (aud: string, exp: number) =>
      new EncryptJWT({ sub: 'x' })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: keys[0]!.id })
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime(exp)
        .encrypt(derived(keys[0]!, aud));
    const now = Math.floor(Date.now() / 1000);
    expect((await s.open('session', await jose('session', now + 60))).sub).toBe('x');
    await expect(s.open('state', await jose('session', now + 60))).rejects.toMatchObject({ reason: 'invalid' });
    await expect(s.open('session', await jose('session', now - 1))).rejects.toMatchObject({ reason: 'expired' });
  });
});
