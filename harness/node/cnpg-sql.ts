/**
 * SQL as a CloudNativePG instance's superuser, for tests that need a state the platform itself never makes (a DBA's
 * role, rows to back up): psql inside the instance's own namespaces on this machine, over its local socket.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { runCommand } from '../cluster/processes';
import { POSTGRES_UID, POSTGRESQL_BIN } from './cnpg-images';

/** The nsenter command line of psql as postgres inside `<ns>/<pod>`'s PostgreSQL (found by the env CNPG gives it). */
function psqlCommand(sql: string, ns: string, pod: string): string[] {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let env: string[];
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    if (!env.includes(`NAMESPACE=${ns}`) || !env.includes(`POD_NAME=${pod}`)) continue;
    const socket = env.find((e) => e.startsWith('PGHOST='))?.slice('PGHOST='.length) ?? '/controller/run';
    const args = [`--target=${pid}`, '--mount', '--net', '--ipc', '--uts', '--pid', `--setuid=${POSTGRES_UID}`, `--setgid=${POSTGRES_UID}`];
    const psqlArgs = ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-h', socket, '-U', 'postgres', '-d', 'app', '-c', sql];
    return [...args, '--', `${POSTGRESQL_BIN}/psql`, ...psqlArgs];
  }
  throw new Error(`no PostgreSQL process of ${ns}/${pod} on this machine`);
}

/**
 * As the database's superuser, inside the PostgreSQL container of `<ns>/<pod>`: what a DBA's psql would do, for a
 * state the platform itself never makes. Blocks for at most 30 s.
 */
export function asSuperuser(sql: string, ns: string, pod: string): string {
  const r = spawnSync('nsenter', psqlCommand(sql, ns, pod), { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`psql as postgres in ${ns}/${pod} failed (${r.status}): ${r.stderr}${r.stdout}`);
  return r.stdout.trim();
}

/** asSuperuser without blocking, for statements that take long (a bench's load): at most `timeoutMs`. */
export async function asSuperuserAsync(sql: string, ns: string, pod: string, timeoutMs = 30 * 60_000): Promise<string> {
  const r = await runCommand('nsenter', psqlCommand(sql, ns, pod), { timeoutMs });
  if (r.code !== 0) throw new Error(`psql as postgres in ${ns}/${pod} failed (${r.code}): ${r.output}`);
  return r.stdout.trim();
}
