/**
 * Opens the login URL in the user's browser when the machine has one: `$BROWSER` if set (as Python's webbrowser and
 * git do), else `open` on macOS, `rundll32 url.dll,FileProtocolHandler` on Windows, else `xdg-open` when a graphical
 * session is running (`$DISPLAY` or `$WAYLAND_DISPLAY`). A machine without any — a server, a container, CI — gets no
 * attempt; the URL is always printed.
 *
 * The URL comes from the provider: it is passed as one argument, never through a shell (`cmd /c start` would run
 * whatever follows an `&` in it), and only an http(s) URL is ever opened (a `file:` or other scheme could start a
 * program through the desktop's handlers).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The command that would open a URL here, or undefined when this machine has no browser to open. */
export function browserCommand(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] | undefined {
  if (env.BROWSER) return [env.BROWSER];
  if (platform === 'darwin') return ['open'];
  if (platform === 'win32') return ['rundll32', 'url.dll,FileProtocolHandler'];
  if ((env.DISPLAY || env.WAYLAND_DISPLAY) && onPath('xdg-open', env)) return ['xdg-open'];
  return undefined;
}

function onPath(bin: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, bin), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The program and its arguments that open `url` here (no shell), or undefined: no browser, or not an http(s) URL. */
export function browserArgv(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  const cmd = browserCommand(env, platform);
  return cmd ? [...cmd, parsed.href] : undefined;
}

/** Starts the browser (detached, its output dropped); resolves whether it could be started. */
export function openBrowser(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const argv = browserArgv(url, env);
  if (!argv) return Promise.resolve(false);
  return new Promise((resolve) => {
    // shell: false (the default) also on Windows: the URL reaches rundll32 as one argument, & and all.
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore', env, shell: false, windowsVerbatimArguments: false });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
