import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { klutchCookieKey } from './keys';
import { Sealer } from './sealer';

describe("klutchCookieKey (Klutch's --cookie-signing-key and --cookie-encryption-key)", () => {
  const signing = randomBytes(32);
  const encryption = randomBytes(16);

  it('is the same key on every replica and after a restart, given the same flags', async () => {
    const replica1 = new Sealer(() => [klutchCookieKey(signing, encryption)]);
    const replica2 = new Sealer(() => [klutchCookieKey(Buffer.from(signing), Buffer.from(encryption))]);
    const sealed = await replica1.seal('session', { sub: 'alice' }, 60_000);
    await expect(replica2.open('session', sealed)).resolves.toMatchObject({ sub: 'alice' });
    expect(klutchCookieKey(signing, encryption).bytes).toHaveLength(32);
  });

  it('is another key when either flag differs, and is neither flag itself', async () => {
    const sealed = await new Sealer(() => [klutchCookieKey(signing, encryption)]).seal('session', { sub: 'alice' }, 60_000);
    for (const other of [
      klutchCookieKey(signing),
      klutchCookieKey(signing, randomBytes(16)),
      klutchCookieKey(randomBytes(32), encryption),
    ]) {
      await expect(new Sealer(() => [other]).open('session', sealed)).rejects.toThrow('sealed with a key this backend does not have');
    }
    const key = klutchCookieKey(signing, encryption).bytes;
    expect(key.equals(signing)).toBe(false);
    // One 64-byte signing key and a 32-byte one with a 32-byte encryption key of the same bytes are different pairs.
    const long = randomBytes(64);
    expect(klutchCookieKey(long).id).not.toBe(klutchCookieKey(long.subarray(0, 32), long.subarray(32)).id);
  });
});
