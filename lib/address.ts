/** Listen addresses as every process we ship takes them (Go's form): `host:port`, `:8080` (every interface), `[::1]:8080`. */

/** Splits `host:port`; throws naming the value when it is not one. */
export function parseAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`"${address}" is not host:port (e.g. 0.0.0.0:8080, :8080 or 127.0.0.1:0)`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/** Whether a URL's host is this machine's loopback, where plain http is no one else's to read. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
