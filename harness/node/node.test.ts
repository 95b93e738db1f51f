import { describe, expect, it } from 'vitest';
import { hostAddress } from './node';

describe('hostAddress', () => {
  it('counts addresses within a prefix and refuses one beyond it', () => {
    expect(hostAddress('10.0.0.0/24', 1)).toBe('10.0.0.1');
    expect(hostAddress('10.0.0.0/24', 10)).toBe('10.0.0.10');
    expect(hostAddress('10.244.0.0/16', 256)).toBe('10.244.1.0');
    expect(() => hostAddress('10.0.0.0/30', 4)).toThrow('10.0.0.0/30 has no address number 4');
  });
});
