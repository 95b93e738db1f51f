import { describe, expect, it } from 'vitest';
import { credentialsReceipt } from './credentials-receipt';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('credentialsReceipt', () => {
  it('tells credentials apart by user and password, and ignores the other keys', () => {
    const a = credentialsReceipt({ username: b64('binding-app'), password: b64('s3cret'), port: b64('5432') });
    expect(a).toMatch(/^sha256:[0-9a-f]{32}$/);
    expect(credentialsReceipt({ username: b64('binding-app'), password: b64('s3cret') })).toBe(a);
    expect(credentialsReceipt({ username: b64('binding_app'), password: b64('s3cret') })).not.toBe(a);
    expect(credentialsReceipt({ username: b64('binding-app'), password: b64('other') })).not.toBe(a);
    // The boundary between the values counts: no two pairs run together into the same bytes.
    expect(credentialsReceipt({ username: b64('ab'), password: b64('c') })).not.toBe(
      credentialsReceipt({ username: b64('a'), password: b64('bc') }),
    );
  });

  it('gives none for a Secret without a user and a password', () => {
    expect(credentialsReceipt({ username: b64('u') })).toBeUndefined();
    expect(credentialsReceipt({ username: b64('u'), password: '' })).toBeUndefined();
    expect(credentialsReceipt(undefined)).toBeUndefined();
    expect(credentialsReceipt({ username: 1, password: b64('p') })).toBeUndefined();
  });
});
