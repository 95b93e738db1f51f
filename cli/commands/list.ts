/**
 * `kubectl bind list`: the APIServiceBindings, whether they are Ready, how many objects each API holds here, and the
 * versions it serves here (a deprecated one marked, its warning in the message), the time left of those objects
 * that expire (a cnpg ServiceBinding's `spec.expiresAt`), and their rotations under way (`status.managed.rotation`).
 */
import { stringify } from 'yaml';
import { type APIServiceBinding, BIND_GROUP } from '../../exports/bind-api';
import { bindingsOf, readyOf } from '../binding';
import { boundObjects, type Rotated } from '../bound-objects';
import { CliError, ExitCode } from '../errors';
import { messageOf, statusOf } from '../../lib/kube-errors';
import type { ListFlags } from '../flags';
import type { Io } from '../io';
import { appCluster } from '../kube';
import { age, span, table } from '../table';

/** The time left of the objects with a lifetime, soonest first: `team/brief expires in 12m`, three at most. */
export function expiring(expiries: readonly { readonly name: string; readonly at: string }[], now = Date.now()): string {
  return firstThree(expiries, 'expire later', ({ name, at }) => {
    const left = Date.parse(at) - now;
    return left > 0 ? `${name} expires in ${span(left)}` : `${name} expired ${span(-left)} ago`;
  });
}

/**
 * The rotations under way: `team/app is rotating its credentials` until the new user works, `team/app's new
 * credentials are on their way here` until the konnector has copied them into this cluster (the overlap counts from
 * then), then `team/app's old credentials work for 4m` until the overlap ends; nothing once it has. Three at most.
 */
export function rotating(rotations: readonly Rotated[], now = Date.now()): string {
  const open = rotations.filter((r) => r.retiresAt === undefined || Date.parse(r.retiresAt) > now);
  return firstThree(open, 'rotating', ({ name, publishedAt, retiresAt }) =>
    retiresAt !== undefined
      ? `${name}'s old credentials work for ${span(Date.parse(retiresAt) - now)}`
      : publishedAt !== undefined
        ? `${name}'s new credentials are on their way here`
        : `${name} is rotating its credentials`,
  );
}

/** What `say` says of the first three items, then `N more <rest>`; the MESSAGE column stays one line. */
function firstThree<T>(items: readonly T[], rest: string, say: (item: T) => string): string {
  return [...items.slice(0, 3).map(say), ...(items.length > 3 ? [`${items.length - 3} more ${rest}`] : [])].join(', ');
}

export async function listCommand(flags: ListFlags, io: Io): Promise<number> {
  const app = appCluster(flags, io.env);
  let items: APIServiceBinding[];
  try {
    items = await bindingsOf(app).list(flags.allNamespaces ? undefined : flags.namespace);
  } catch (e) {
    if (statusOf(e) === 404)
      items = []; // no konnector ever installed: no APIServiceBinding CRD
    else
      throw new CliError(
        `cannot list APIServiceBindings in ${app.server}: ${messageOf(e)}`,
        'check --kubeconfig and --context',
        ExitCode.Failed,
        { cause: e },
      );
  }
  // As kubectl prints a list in both formats: one List document.
  const list = { apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } };
  if (flags.output === 'json') return (void io.stdout.write(`${JSON.stringify(list, null, 4)}\n`), 0);
  if (flags.output === 'yaml') return (void io.stdout.write(stringify(list)), 0);
  // As `kubectl get -o name`: <resource>.<group>/<name>, one a line.
  if (flags.output === 'name')
    return (void io.stdout.write(items.map((b) => `apiservicebinding.${BIND_GROUP}/${b.metadata.name}\n`).join('')), 0);
  if (!items.length) {
    io.stderr.write(
      `No APIServiceBindings ${flags.allNamespaces ? 'in this cluster' : `in namespace ${flags.namespace}`}; bind one with kubectl bind <url>.\n`,
    );
    return 0;
  }
  const rows = await Promise.all(
    items.map(async (b) => {
      const ready = readyOf(b);
      const objects = await boundObjects(app, b.metadata.name!).catch(() => undefined);
      return [
        ...(flags.allNamespaces ? [b.metadata.namespace!] : []),
        b.metadata.name!,
        b.status?.providerPrettyName ?? '',
        b.metadata.deletionTimestamp ? 'Deleting' : (ready?.status ?? 'Unknown'),
        objects ? `${objects.names.length} ${objects.kind}` : '-',
        objects?.versions.map((v) => `${v.name}${v.deprecated ? ' (deprecated)' : ''}`).join(',') || '-',
        b.spec.kubeconfigSecretRef.name,
        age(b.metadata.creationTimestamp),
        [
          ready?.status === 'True' ? '' : (ready?.message ?? ''),
          ...(objects?.versions ?? []).flatMap((v) => v.deprecated ?? []),
          expiring(objects?.expiries ?? []),
          rotating(objects?.rotations ?? []),
        ]
          .filter(Boolean)
          .join('; '),
      ];
    }),
  );
  const headers = [
    ...(flags.allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'PROVIDER',
    'READY',
    'OBJECTS',
    'VERSION',
    'SECRET',
    'AGE',
    'MESSAGE',
  ];
  const out = table(headers, rows);
  io.stdout.write(flags.noHeaders ? out.slice(out.indexOf('\n') + 1) : out);
  return 0;
}
