/**
 * The proxies in front of the backend (--login-rate-trusted-proxies), whose X-Forwarded-For the login limit believes
 * (rate-limit.ts `clientKey`). A module of its own, free of client libraries: the options (and through them synth's
 * bundle) read it.
 */
import { BlockList, isIP } from 'node:net';

/** Addresses and networks; `has` answers for an address, an IPv4-mapped IPv6 one as IPv4. */
export class TrustedProxies {
  private readonly list = new BlockList();

  /** `cidrs`: addresses or networks (`10.0.0.0/8`, `fd00::/8`); a bad one throws, naming it. */
  constructor(readonly cidrs: readonly string[]) {
    for (const c of cidrs) {
      const [net = '', bits, extra] = c.split('/');
      const family = isIP(net);
      const max = family === 6 ? 128 : 32;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (!family || extra !== undefined || !(prefix >= 0 && prefix <= max))
        throw new Error(`"${c}" is not an IP address or network (give one such as 10.0.0.0/8 or fd00::/8)`);
      this.list.addSubnet(net, prefix, family === 6 ? 'ipv6' : 'ipv4');
    }
  }

  has(address: string): boolean {
    const a = address.replace(/^::ffff:(?=\d+\.)/, '');
    const family = isIP(a);
    return family !== 0 && this.list.check(a, family === 6 ? 'ipv6' : 'ipv4');
  }
}
