/**
 * kubectl bind as an app developer runs it against the sandbox's backend: the release's plugin with the app cluster's
 * kubeconfig, a headless login at the OpenID provider, the API picked on the backend's page. Steps 7 and 8, and every
 * later API a test binds (`Sandbox.bind`), go through it; each API is bound once.
 */
import { join } from 'node:path';
import { headlessLogin, startCli } from '../harness/parts/cli';
import type { Node } from '../harness/node/node';
import { repoRoot } from '../harness/root';
import type { InstalledBackend } from './backend-install';

export interface KubectlBindContext {
  /** The sandbox folder (the backend's CA is there). */
  readonly dir: string;
  /** The app cluster's admin kubeconfig file. */
  readonly kubeconfig: string;
  readonly user: string;
  readonly backend: InstalledBackend;
  /** The control plane's node, where the issuer's address is. */
  readonly cpNode: Node;
  /** The plugin's bundle to run: the release's (sandbox/release.ts). */
  readonly plugin: Promise<string>;
  say(line: string): void;
}

/** Binds the API of plural `resource`; asked again for an API it bound, it answers the first bind (a failed one is tried anew). */
export function kubectlBinder(c: KubectlBindContext): (resource: string) => Promise<void> {
  const { idp, publicUrl, backendCa, idpRoute, hostRoutes } = c.backend;
  const bindOnce = async (resource: string): Promise<void> => {
    const cli = await startCli([`${publicUrl}/export`, '--accept-permission-claims', '--no-browser', '--wait=180s'], {
      kubeconfig: c.kubeconfig,
      env: {
        NODE_EXTRA_CA_CERTS: join(c.dir, 'backend-ca.crt'),
        // This machine reaches the control plane's external address (the app node's bridge to it) at the same API
        // server on loopback; any other address is refused (host-routes.cjs).
        NODE_OPTIONS: `--require ${join(repoRoot(), 'harness', 'node', 'host-routes.cjs')}`,
        KLUTCH_KIT_HOST_ROUTES: JSON.stringify(hostRoutes),
      },
      closeStdin: true,
      bundle: await c.plugin,
    });
    const url = await cli.loginUrl();
    c.say(`kubectl bind ${publicUrl}/export  →  login URL ${url.slice(0, 60)}...`);
    await headlessLogin(url, {
      idp,
      user: c.user,
      resource,
      ca: [backendCa],
      route: (u) => (u.hostname === c.cpNode.ip ? idpRoute : undefined),
    });
    c.say(`logged in as "${c.user}" (headless) and picked ${resource} on the backend's page`);
    const r = await cli.done;
    if (r.code !== 0) throw new Error(`kubectl bind exited with ${r.code ?? r.signal}:\n${r.stderr}\n${r.stdout}`);
    for (const line of r.stdout.split('\n').slice(0, 3)) if (line.trim()) c.say(line);
  };
  const bound = new Map<string, Promise<void>>();
  return (resource: string): Promise<void> => {
    let b = bound.get(resource);
    if (!b) {
      b = bindOnce(resource);
      bound.set(resource, b);
      b.catch(() => bound.delete(resource)); // a failed bind may be asked for again
    }
    return b;
  };
}
