/**
 * Opens the login URL in the user's browser when the machine has one: `$BROWSER` if set (as Python's webbrowser and
 * git do), else `open` on macOS, else `xdg-open` when a graphical session is running (`$DISPLAY` or
 * `$WAYLAND_DISPLAY`). A machine without any — a server, a container, CI — gets no attempt; the URL is always printed.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The command that would open a URL here, or undefined when this machine has no browser to open. */
export function browserCommand(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] | undefined {
  if (env.BROWSER) return [env.BROWSER];
  if (platform === 'darwin') return ['open'];
  if (platform === 'win32') return ['cmd', '/c', 'start', '""'];
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

/** Starts the browser (detached, its output dropped); resolves whether it could be started. */
export function openBrowser(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const cmd = browserCommand(env);
  if (!cmd) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(cmd[0]!, [...cmd.slice(1), url], { detached: true, stdio: 'ignore', env });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
