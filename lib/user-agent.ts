/**
 * The User-Agent of this process's requests to API servers, so that their audit logs and `apiserver_request_total`
 * tell the bind backend, the konnector and `kubectl bind` apart (client-node sends undici's, or none, for all
 * three). Shaped as client-go's: `<command>/<version> (<os>/<arch>) node/<node version>`. Each process names itself
 * once at start (`setUserAgent`); the clients in controller/ read it on every request.
 */
import { VERSION } from './version';

let command = 'klutch-kit';

/** Names the process: `klutch-bind-backend`, `konnector`, `kubectl-bind`. */
export function setUserAgent(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`"${name}" is not a User-Agent product name (letters, digits, . _ -)`);
  command = name;
}

export function userAgent(): string {
  return `${command}/${VERSION} (${process.platform}/${process.arch}) node/${process.version}`;
}
