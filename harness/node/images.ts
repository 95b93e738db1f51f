/**
 * Images the node needs, made locally without a registry: the pause image (a static C program) under the exact name
 * containerd's `sandbox_image` uses, and a busybox image (Debian's busybox-static) for test Pods. Built once with
 * buildah (`--storage-driver vfs`, storage in the cache, not the machine's) into OCI archives in the cache, and
 * imported into each node's containerd.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../tools/cache';
import { program } from '../tools/programs';
import { runCommand, runSync } from '../cluster/processes';
import { ctrArgs, PAUSE_IMAGE } from './containerd';
/** Busybox from Debian's busybox-static, every applet linked in /bin. */
export const BUSYBOX_IMAGE = 'klutch-kit.test/busybox:1.35';

const PAUSE_C = `#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
/* The pause container: holds the Pod's namespaces until it is told to stop. */
static void stop(int sig) { (void)sig; exit(0); }
int main(void) {
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  for (;;) pause();
}
`;

export const imagesDir = () => join(cacheRoot(), 'node-images');

/**
 * buildah with its storage in the work folder (vfs: no overlay mounts on the machine). Two files buildah writes at
 * fixed places stay off the machine too: its blob cache (/var/lib/containers/cache, for root) lands on a tmpfs over
 * /var/lib in a mount namespace of its own, and its CNI folder (/etc/cni/net.d) is named in a containers.conf of the
 * work folder.
 */
export function buildah(work: string, args: readonly string[]): string {
  const c = buildahCommand(work, args);
  return runSync('buildah', c.command, c.args, { env: c.env, timeoutMs: 300_000 }).trim();
}

/** buildah as above, without blocking the event loop (the platform's start pushes beside other work); its stdout. */
export async function buildahAsync(work: string, args: readonly string[]): Promise<string> {
  const c = buildahCommand(work, args);
  const r = await runCommand(c.command, c.args, { env: c.env, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`buildah failed: ${c.command} ${c.args.join(' ')}:\n${r.output}`);
  return r.stdout.trim();
}

function buildahCommand(work: string, args: readonly string[]): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const conf = join(work, 'containers.conf');
  if (!existsSync(conf)) {
    mkdirSync(join(work, 'cni'), { recursive: true });
    writeFileSync(conf, `[network]\nnetwork_backend = "cni"\nnetwork_config_dir = "${join(work, 'cni')}"\n`);
  }
  return {
    command: 'unshare',
    args: [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      `mount -t tmpfs klutch-kit-buildah /var/lib && exec ${program('buildah')} "$@"`,
      'sh',
      '--root',
      join(work, 'storage'),
      '--runroot',
      join(work, 'run'),
      '--storage-driver',
      'vfs',
      ...args,
    ],
    env: { ...process.env, CONTAINERS_CONF: conf },
  };
}

/**
 * An OCI archive of an image whose root file system is `rootfs`, named `name`; made once. `copies` are more
 * `buildah copy` options and paths (`['--chown', '65532:65532', '<dir>', '/home/nonroot']`): `rootfs` is copied as root.
 */
export function ensureArchive(
  file: string,
  name: string,
  rootfs: (dir: string) => void,
  config: readonly string[],
  log: (l: string) => void,
  copies: readonly (readonly string[])[] = [],
): string {
  if (existsSync(file)) return file;
  mkdirSync(imagesDir(), { recursive: true });
  const work = mkdtempSync(join(imagesDir(), 'build-'));
  try {
    log(`building the image ${name} with buildah ...`);
    const root = join(work, 'rootfs');
    mkdirSync(root);
    rootfs(root);
    const c = buildah(work, ['from', 'scratch']);
    try {
      buildah(work, ['copy', c, `${root}/`, '/']);
      for (const copy of copies) buildah(work, ['copy', ...copy.slice(0, -2), c, ...copy.slice(-2)]);
      buildah(work, ['config', ...config, c]);
      buildah(work, ['commit', '--format', 'oci', c, name]);
    } finally {
      buildah(work, ['rm', c]);
    }
    const tmp = `${file}.tmp-${process.pid}`;
    buildah(work, ['push', name, `oci-archive:${tmp}:${name}`]);
    renameSync(tmp, file);
    return file;
  } finally {
    // vfs layers are plain folders: nothing is mounted, a plain rm removes the storage.
    rmSync(work, { recursive: true, force: true });
  }
}

export function ensurePauseImage(log: (l: string) => void): string {
  return ensureArchive(
    join(imagesDir(), 'pause-3.10.oci.tar'),
    PAUSE_IMAGE,
    (root) => {
      const src = join(root, '..', 'pause.c');
      writeFileSync(src, PAUSE_C);
      program('libc.a');
      runSync('compiling the pause program', program('gcc'), ['-static', '-Os', '-o', join(root, 'pause'), src]);
    },
    ['--entrypoint', '["/pause"]'],
    log,
  );
}

export function ensureBusyboxImage(log: (l: string) => void): string {
  return ensureArchive(
    join(imagesDir(), 'busybox-1.35.oci.tar'),
    BUSYBOX_IMAGE,
    (root) => {
      const bin = join(root, 'bin');
      mkdirSync(bin);
      runSync('copying busybox', 'cp', [program('busybox'), join(bin, 'busybox')]);
      for (const applet of runSync('listing busybox applets', program('busybox'), ['--list']).trim().split('\n')) {
        if (applet && applet !== 'busybox') symlinkSync('busybox', join(bin, applet));
      }
      for (const d of ['tmp', 'etc', 'www']) mkdirSync(join(root, d));
      writeFileSync(join(root, 'etc', 'passwd'), 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
      writeFileSync(join(root, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
    },
    ['--cmd', '["/bin/sh"]', '--env', 'PATH=/bin'],
    log,
  );
}

/**
 * Imports OCI archives into the node's containerd (CRI namespace) under the names they carry. Not spawnSync: two
 * nodes start side by side (the sandbox's), and a blocked event loop would import their 100 MB each one after the other.
 */
export async function importImages(socket: string, archives: readonly string[]): Promise<void> {
  for (const a of archives) {
    const r = await runCommand(program('ctr'), ctrArgs(socket, ['images', 'import', a]), { timeoutMs: 120_000 });
    if (r.code !== 0) throw new Error(`importing ${a} into the node's containerd (${socket}) failed:\n${r.output}`);
  }
}
