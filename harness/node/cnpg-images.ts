/**
 * The CloudNativePG backend's images, made by the project (docs/decisions/cloudnative-pg.md), as OCI archives in the
 * cache keyed by their inputs, under the names the operator's manifest and the catalog use:
 *
 * - the operator, `ghcr.io/cloudnative-pg/cloudnative-pg:1.30.0`: the static `manager` of harness/tools/cloudnative-pg.ts
 *   laid out as upstream's Dockerfile lays it out (`/operator/manager_amd64`, `/manager` linking to it, user 65532 on
 *   distroless' static layout). CNPG starts it three ways: the controller, the `bootstrap` init container of every
 *   instance Pod (which copies it into the Pod), and from that copy the instance manager running PostgreSQL;
 * - PostgreSQL 15, `ghcr.io/cloudnative-pg/postgresql:15-bookworm`: Debian's postgresql-15 and postgresql-client-15
 *   (the machine's Debian 12 packages, whose versions key the cache) with the shared libraries their programs load,
 *   tzdata's zone files (Debian builds PostgreSQL with the system time zones), /bin/sh (busybox-static: PostgreSQL
 *   runs `archive_command` through it), the C.UTF-8 locale and the user `postgres` (26), which CNPG runs the instance
 *   as.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { runSync } from '../cluster/processes';
import { debianVersions } from '../tools/debian';
import { ensurePrograms, IMAGE_PROGRAMS, program, PROGRAMS } from '../tools/programs';
import { CNPG_VERSION, ensureCnpgManager } from '../tools/cloudnative-pg';
import { ensureArchive } from './images';
import { keyedArchive } from './platform-images';

const CNPG_OPERATOR_IMAGE = `ghcr.io/cloudnative-pg/cloudnative-pg:${CNPG_VERSION.slice(1)}`;
/** The image the catalog's cnpg offering names for PostgreSQL 15 (apis/catalog/postgresql.ts). */
export const CNPG_POSTGRESQL_IMAGE = 'ghcr.io/cloudnative-pg/postgresql:15-bookworm';
/** Where Debian puts PostgreSQL 15's programs; on the image's PATH. */
export const POSTGRESQL_BIN = '/usr/lib/postgresql/15/bin';
/** The uid and gid CNPG runs PostgreSQL as (its `postgresUID`/`postgresGID` defaults). */
export const POSTGRES_UID = 26;
/** Bump when what the builders put into the images changes. */
const LAYOUT = 3;

/** What the PostgreSQL image is made of; the first three are copied whole, the others in part. */
const POSTGRESQL_PROGRAMS = ['postgres', 'psql', 'barman-cloud-backup', 'zoneinfo', 'busybox', ...IMAGE_PROGRAMS] as const;
const BARMAN_PACKAGE: string = PROGRAMS['barman-cloud-backup'].package;

/**
 * Barman Cloud and the Python it runs on: the packages of its dependency closure that are Python (`python3*`,
 * `libpython3*`), as upstream's image has them. The libraries their programs load come with `ldd` below; the rest of
 * the closure is what installing packages needs (perl, debconf, dpkg), not running them.
 */
function barmanPackages(): string[] {
  const seen = new Set<string>([BARMAN_PACKAGE]);
  const queue = [BARMAN_PACKAGE];
  while (queue.length > 0) {
    const pkg = queue.pop()!;
    const depends = runSync(`reading the dependencies of ${pkg}`, 'dpkg-query', ['-W', '-f', '${Depends},${Pre-Depends}', pkg])
      .split(/[,|]/)
      .map((d) => d.trim().split(/[\s:(]/)[0] ?? '')
      .filter((d) => /^(lib)?python3[a-z0-9.+-]*$/.test(d) && !seen.has(d));
    if (depends.length === 0) continue;
    // Only installed ones (a version): an alternative not chosen (`a | b`) is known to dpkg but has none.
    const installed = debianVersions(depends)
      .lines.split('\n')
      .map((l) => l.split('='))
      .filter(([name, version]) => name && version)
      .map(([name]) => name!);
    for (const d of installed) {
      seen.add(d);
      queue.push(d);
    }
  }
  return [...seen].sort();
}

/** The users and files every image here has: root, nobody, nonroot (65532), postgres (26), /tmp. */
export function baseLayout(root: string, what: string): void {
  mkdirSync(join(root, 'etc'), { recursive: true });
  writeFileSync(
    join(root, 'etc', 'passwd'),
    'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' +
      `postgres:x:${POSTGRES_UID}:${POSTGRES_UID}:PostgreSQL:/var/lib/postgresql:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n`,
  );
  writeFileSync(join(root, 'etc', 'group'), `root:x:0:\nnogroup:x:65534:\npostgres:x:${POSTGRES_UID}:\nnonroot:x:65532:\n`);
  writeFileSync(
    join(root, 'etc', 'os-release'),
    `PRETTY_NAME="klutch-kit's local image (${what}, Debian 12 packages)"\nID=debian\nVERSION_ID="12"\n`,
  );
  for (const d of ['tmp', 'home/nonroot', 'var/lib/postgresql']) mkdirSync(join(root, d), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
}

/** The operator image (CNPG's own layout); progress to `log`. */
export async function ensureCnpgOperatorImage(log: (line: string) => void): Promise<string> {
  await ensurePrograms(IMAGE_PROGRAMS, log);
  const manager = await ensureCnpgManager(log);
  const key = createHash('sha256')
    .update(`${CNPG_OPERATOR_IMAGE}\n${basename(dirname(manager))}\nlayout ${LAYOUT}\n`)
    .digest('hex')
    .slice(0, 12);
  return ensureArchive(
    keyedArchive('cnpg-operator', key),
    CNPG_OPERATOR_IMAGE,
    (root) => {
      mkdirSync(join(root, 'operator'), { recursive: true });
      copyFileSync(manager, join(root, 'operator', 'manager_amd64'));
      chmodSync(join(root, 'operator', 'manager_amd64'), 0o755);
      symlinkSync('operator/manager_amd64', join(root, 'manager'));
      baseLayout(root, `CloudNativePG ${CNPG_VERSION}`);
      const r = spawnSync('chroot', [root, '/manager', 'version'], { encoding: 'utf8' });
      if (r.status !== 0 || !r.stdout.includes(CNPG_VERSION.slice(1)))
        throw new Error(`/manager version does not run in the root of ${CNPG_OPERATOR_IMAGE} (${root}): ${r.stdout}${r.stderr}`);
    },
    ['--user', '65532:65532', '--workingdir', '/', '--entrypoint', '["/manager"]'],
    log,
  );
}

/** The shared libraries the programs load (`ldd` of each), as the paths they are found at. */
function libraries(programs: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const p of programs) {
    const r = spawnSync('ldd', [p], { encoding: 'utf8' });
    for (const m of (r.stdout ?? '').matchAll(/(\/\S+) \(0x/g)) out.add(m[1]!);
  }
  return out;
}

function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isElf(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(4);
    return readSync(fd, b, 0, 4, 0) === 4 && b.toString('latin1') === '\x7fELF';
  } finally {
    closeSync(fd);
  }
}

/** Copies `path` (a file or a link, with the folders above it) from the machine into `root`. */
function copyIn(root: string, path: string): void {
  // Debian 12 is merged-/usr: everything lands below /usr, and /lib, /lib64 link there.
  const to = join(root, path.replace(/^\/(lib|lib64)\//, '/usr/$1/'));
  if (present(to) || !existsSync(path)) return;
  mkdirSync(dirname(to), { recursive: true });
  const st = lstatSync(path);
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(path), to);
  else if (st.isFile()) {
    copyFileSync(path, to);
    chmodSync(to, st.mode & 0o7777);
  }
}

/** The PostgreSQL 15 image from Debian's packages; progress to `log`. */
export async function ensureCnpgPostgresImage(log: (line: string) => void): Promise<string> {
  await ensurePrograms(POSTGRESQL_PROGRAMS, log);
  const packages = [PROGRAMS.postgres.package, PROGRAMS.psql.package, ...barmanPackages()];
  const files = packages
    .flatMap((p) => runSync(`listing ${p}`, 'dpkg', ['-L', p]).split('\n'))
    // Documentation, manuals and translations are not needed; llvmjit (JIT through LLVM, 100 MB of libraries) is
    // left out: PostgreSQL runs without JIT when its provider cannot be loaded.
    .filter((f) => f.startsWith('/usr/') && !/^\/usr\/share\/(doc|man|locale|lintian)\//.test(f) && !/llvmjit/.test(f))
    .filter((f) => existsSync(f) && !lstatSync(f).isDirectory());
  // The key: the packages' versions and those of what they depend on (the libraries their programs load).
  const names = [...packages, PROGRAMS.zoneinfo.package, PROGRAMS.busybox.package, 'libc-bin'];
  const depends = runSync('reading dependencies', 'dpkg-query', ['-W', '-f', '${Depends},', ...names])
    .split(/[,|]/)
    .map((d) => d.trim().split(/[\s:(]/)[0] ?? '')
    .filter((d) => /^[a-z0-9][a-z0-9.+-]+$/.test(d));
  // One dpkg-query for all: the dependencies dpkg knows no package of (virtual ones, alternatives not installed) are
  // left out of its answer, as they were when each was asked on its own.
  const versions = debianVersions([...names, ...depends]);
  const key = createHash('sha256').update(`${CNPG_POSTGRESQL_IMAGE}\n${versions.lines}\nlayout ${LAYOUT}\n`).digest('hex').slice(0, 12);
  return ensureArchive(
    keyedArchive('cnpg-postgresql-15', key),
    CNPG_POSTGRESQL_IMAGE,
    (root) => {
      for (const f of files) {
        copyIn(root, f);
        // Debian compiles the Python modules when it installs them, so dpkg does not list the bytecode; without it
        // every `barman-cloud-wal-archive` (one per WAL segment) would compile botocore again.
        if (f.endsWith('.py')) {
          const cache = join(dirname(f), '__pycache__');
          const stem = `${basename(f, '.py')}.`;
          if (existsSync(cache))
            for (const c of readdirSync(cache)) if (c.startsWith(stem) && c.endsWith('.pyc')) copyIn(root, join(cache, c));
        }
      }
      for (const lib of libraries(files.filter((f) => /\/(bin|lib)\//.test(f) && lstatSync(f).isFile() && isElf(f)))) {
        copyIn(root, lib);
        copyIn(root, realpathSync(lib));
      }
      for (const d of ['lib', 'lib64'])
        if (existsSync(join(root, 'usr', d)) && !existsSync(join(root, d))) symlinkSync(`usr/${d}`, join(root, d));
      // initdb needs the locale LANG names: Debian's C.UTF-8 is a compiled locale of libc-bin, not built into glibc.
      cpSync('/usr/lib/locale/C.utf8', join(root, 'usr', 'lib', 'locale', 'C.utf8'), { recursive: true });
      cpSync('/usr/share/zoneinfo', join(root, 'usr', 'share', 'zoneinfo'), { recursive: true, verbatimSymlinks: true });
      mkdirSync(join(root, 'bin'), { recursive: true });
      copyFileSync(program('busybox'), join(root, 'bin', 'busybox'));
      chmodSync(join(root, 'bin', 'busybox'), 0o755);
      symlinkSync('busybox', join(root, 'bin', 'sh'));
      baseLayout(root, 'PostgreSQL 15');
      const r = spawnSync('chroot', [root, `${POSTGRESQL_BIN}/postgres`, '--version'], { encoding: 'utf8' });
      if (r.status !== 0 || !r.stdout.includes('PostgreSQL) 15'))
        throw new Error(`postgres --version does not run in the root of ${CNPG_POSTGRESQL_IMAGE} (${root}): ${r.stdout}${r.stderr}`);
      // The Python of Barman Cloud, with boto3 (S3) and psycopg2 (the backup's PostgreSQL connection) importable.
      const b = spawnSync('chroot', [root, '/usr/bin/python3', '-c', 'import barman.clients.cloud_walarchive, boto3, psycopg2'], {
        encoding: 'utf8',
      });
      const v = spawnSync('chroot', [root, '/usr/bin/barman-cloud-wal-archive', '--version'], { encoding: 'utf8' });
      if (b.status !== 0 || v.status !== 0)
        throw new Error(`Barman Cloud does not run in the root of ${CNPG_POSTGRESQL_IMAGE} (${root}): ${b.stderr}${v.stdout}${v.stderr}`);
      log(`${CNPG_POSTGRESQL_IMAGE}: ${v.stdout.trim()}`);
    },
    [
      '--user',
      `${POSTGRES_UID}:${POSTGRES_UID}`,
      '--env',
      `PATH=${POSTGRESQL_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      '--env',
      'LANG=C.UTF-8',
      '--cmd',
      JSON.stringify([`${POSTGRESQL_BIN}/postgres`, '--version']),
    ],
    log,
  );
}

/**
 * A Pod that runs `sql` with psql once, configured only by the Secret `secret` in the a8s binding keys (what an app
 * developer's Pod would mount); `host` replaces the address it names (to aim a tenant's credentials elsewhere).
 * `tls`: `verify-ca` checks the server against the Secret's `ca.crt` (mounted as a file, as libpq wants it);
 * `disable` connects without TLS; default libpq's `prefer`.
 */
export function psqlClientPod(o: {
  readonly name: string;
  readonly secret: string;
  readonly sql: string;
  readonly host?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly tls?: 'verify-ca' | 'disable';
}): Record<string, unknown> {
  const CA_DIR = '/etc/postgresql-ca';
  const tlsEnv =
    o.tls === 'verify-ca'
      ? [
          { name: 'PGSSLMODE', value: 'verify-ca' },
          { name: 'PGSSLROOTCERT', value: `${CA_DIR}/ca.crt` },
        ]
      : o.tls === 'disable'
        ? [{ name: 'PGSSLMODE', value: 'disable' }]
        : [];
  const ca = o.tls === 'verify-ca';
  const env = (
    [
      ['PGHOST', 'instance_service'],
      ['PGDATABASE', 'database'],
      ['PGUSER', 'username'],
      ['PGPASSWORD', 'password'],
    ] as const
  ).map(([name, key]) =>
    name === 'PGHOST' && o.host ? { name, value: o.host } : { name, valueFrom: { secretKeyRef: { name: o.secret, key } } },
  );
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, ...(o.labels ? { labels: o.labels } : {}) },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'psql',
          image: CNPG_POSTGRESQL_IMAGE,
          imagePullPolicy: 'Never',
          command: [`${POSTGRESQL_BIN}/psql`, '-v', 'ON_ERROR_STOP=1', '-tA', '-c', o.sql],
          env: [...env, ...tlsEnv],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true },
          ...(ca ? { volumeMounts: [{ name: 'ca', mountPath: CA_DIR, readOnly: true }] } : {}),
        },
      ],
      ...(ca ? { volumes: [{ name: 'ca', secret: { secretName: o.secret, items: [{ key: 'ca.crt', path: 'ca.crt' }] } }] } : {}),
    },
  };
}

/**
 * A Pod that knows nothing but what the Service Binding for Kubernetes spec gives a workload: the Secret `secret`
 * projected at `/bindings/db` (servicebinding.io's layout, one file per key). Its shell reads `type` (it must be
 * `postgresql`), `uri` (host, port, database and sslmode in libpq's URI form), `username` and `password` from there
 * and runs `sql` with psql, verifying the server with `/bindings/db/ca.crt`. busybox's sh: `read` is a builtin, there
 * is no `cat`.
 */
export function bindingsClientPod(o: { readonly name: string; readonly secret: string; readonly sql: string }): Record<string, unknown> {
  const script = [
    'd=/bindings/db',
    'for k in type uri username password; do read -r "$k" < "$d/$k"; done',
    '[ "$type" = postgresql ] || { echo "binding type is $type, not postgresql"; exit 3; }',
    'export PGUSER="$username" PGPASSWORD="$password" PGSSLROOTCERT="$d/ca.crt"',
    `exec ${POSTGRESQL_BIN}/psql "$uri" -v ON_ERROR_STOP=1 -tA -c "$0"`,
  ].join('\n');
  return bindingsScriptPod({ name: o.name, secret: o.secret, container: 'psql', script, args: [o.sql] });
}

/**
 * A client that keeps querying through a rotation of its binding's password (issue 39 item 2): it reads
 * `/bindings/db` (the binding's Secret) before each session of `batch` `SELECT 1` queries, as an app that reconnects
 * with what the Secret holds now; a session that fails is counted and retried with the Secret read again. It prints
 * `user <name> at <queries>` whenever the user changes, `failed <user> after <ok> of <batch>: <error>` for each failed
 * session, and at the end `queries <n> failed <f>`; it ends once it ran at least `atLeast` queries and the file `stop`
 * exists in the ConfigMap `stopFrom` (which the test makes once the old user is revoked).
 */
export function rotationClientPod(o: {
  readonly name: string;
  readonly secret: string;
  readonly stopFrom: string;
  readonly atLeast: number;
  readonly batch: number;
}): Record<string, unknown> {
  // busybox's sh alone: its builtins, psql, and no writable file (here-documents are pipes in ash).
  const script = [
    "d=/bindings/db; n=0; f=0; last=; nl='",
    "'; sql=; i=0",
    `while [ $i -lt ${o.batch} ]; do sql="$sql$nl"'SELECT 1;'; i=$((i+1)); done`,
    // The kubelet swaps the whole Secret at once: a username read again after the password is the same pair.
    'read_creds() { while :; do read -r user < $d/username; read -r pass < $d/password; read -r uri < $d/uri; read -r again < $d/username; [ "$user" = "$again" ] && return; done; }',
    `until [ $n -ge ${o.atLeast} ] && [ -f /stop/stop ]; do`,
    '  read_creds',
    '  [ "$user" = "$last" ] || { echo "user $user at $n"; last=$user; }',
    `  out=$(PGUSER="$user" PGPASSWORD="$pass" PGSSLROOTCERT=$d/ca.crt ${POSTGRESQL_BIN}/psql "$uri" -v ON_ERROR_STOP=1 -tA -f - 2>&1 <<EOF`,
    '$sql',
    'EOF',
    ')',
    '  ok=0; err=',
    '  while read -r l; do if [ "$l" = 1 ]; then ok=$((ok+1)); elif [ -z "$err" ]; then err=$l; fi; done <<EOF',
    '$out',
    'EOF',
    '  n=$((n+ok))',
    `  [ "$ok" -eq ${o.batch} ] || { f=$((f+1)); echo "failed $user after $ok of ${o.batch}: $err"; }`,
    'done',
    'echo "queries $n failed $f"',
  ].join('\n');
  const stop = {
    mount: { name: 'stop', mountPath: '/stop', readOnly: true },
    volume: { name: 'stop', configMap: { name: o.stopFrom, optional: true } },
  };
  return bindingsScriptPod({ name: o.name, secret: o.secret, container: 'client', script, extra: stop });
}

/**
 * A Pod of the PostgreSQL image that runs a busybox `sh` script (`args` after it) as the image's user, with nothing
 * but the binding's Secret at `/bindings/db` (and `extra`, a volume and where it goes).
 */
function bindingsScriptPod(o: {
  readonly name: string;
  readonly secret: string;
  readonly container: string;
  readonly script: string;
  readonly args?: readonly string[];
  readonly extra?: { readonly mount: Record<string, unknown>; readonly volume: Record<string, unknown> };
}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: o.container,
          image: CNPG_POSTGRESQL_IMAGE,
          imagePullPolicy: 'Never',
          command: ['/bin/sh', '-c', o.script, ...(o.args ?? [])],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true },
          volumeMounts: [{ name: 'binding', mountPath: '/bindings/db', readOnly: true }, ...(o.extra ? [o.extra.mount] : [])],
        },
      ],
      volumes: [{ name: 'binding', secret: { secretName: o.secret } }, ...(o.extra ? [o.extra.volume] : [])],
    },
  };
}
