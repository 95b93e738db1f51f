/**
 * `kubectl bind remove <binding>`: unbinding in the konnector's documented deletion order, so no claim is stranded.
 * The binding is deleted; the konnector (holding its finalizer) deletes every object of the API in this cluster,
 * waits until each copy on the provider is gone, deletes the API's CRD and releases the binding. Only then does this
 * command remove what the konnector needed until the end: its access grant for the API, and the provider kubeconfig
 * Secret if no other binding uses it. It asks first (the objects go with the binding) unless `--yes`.
 */
import type { APIServiceBinding } from '../../exports/bind-api';
import { bindingsOf, getBinding } from '../binding';
import { boundObjects } from '../bound-objects';
import { formatDuration } from '../duration';
import { CliError, ExitCode, TimeoutError } from '../errors';
import { messageOf } from '../../lib/kube-errors';
import type { RemoveFlags } from '../flags';
import { Answers, type Io } from '../io';
import { appCluster, getOrUndefined, sleep, type Cluster } from '../kube';
import { KONNECTOR_LEASE, konnectorLease, konnectorRuns } from '../konnector-lease';

export async function removeCommand(flags: RemoveFlags, io: Io): Promise<number> {
  const app = appCluster(flags, io.env);
  const ns = flags.namespace;
  const say = (line: string) => io.stderr.write(`${line}\n`);
  const binding = await getBinding(app, ns, flags.binding).catch((e: unknown) => {
    throw new CliError(
      `cannot read APIServiceBinding ${ns}/${flags.binding}: ${messageOf(e)}`,
      'check --kubeconfig and --context',
      ExitCode.Failed,
      { cause: e },
    );
  });
  if (!binding) {
    const list = await bindingsOf(app)
      .list(ns)
      .catch((): APIServiceBinding[] => []);
    const names = list.map((b) => b.metadata.name).join(', ');
    throw new CliError(
      `no APIServiceBinding ${flags.binding} in namespace ${ns}`,
      names ? `the bindings there: ${names}` : 'kubectl bind list -A shows every binding',
    );
  }
  const objects = await boundObjects(app, flags.binding).catch(() => undefined);
  const count = objects?.names.length ?? 0;
  const what = objects
    ? `its ${count} ${objects.kind} object(s) in this cluster${count ? ` (${objects.names.slice(0, 5).join(', ')}${count > 5 ? ', …' : ''})` : ''} and their copies on the provider`
    : 'the binding';
  if (!flags.yes) {
    io.stdout.write(`Removing ${flags.binding} deletes ${what}.\nRemove it? [No,Yes]\n`);
    const answers = new Answers(io.stdin, io.signal);
    const answer = (await answers.next())?.trim().toLowerCase();
    answers.close();
    if (answer === undefined)
      throw new CliError('removal not confirmed: the input ended', 'pass --yes to remove without asking', ExitCode.Declined);
    if (answer !== 'yes' && answer !== 'y') throw new CliError(`removal not confirmed (answer "${answer}")`, undefined, ExitCode.Declined);
  }
  const lease = await konnectorLease(app, ns);
  if (lease.unreadable)
    say(
      `Whether the konnector in namespace ${ns} runs is not known (Lease ${ns}/${KONNECTOR_LEASE}: ${lease.unreadable}): the removal waits for it.`,
    );
  else if (!konnectorRuns(lease))
    say(
      `The konnector in namespace ${ns} does not seem to run (Lease ${ns}/${KONNECTOR_LEASE} is not being renewed): the removal waits for it.`,
    );
  try {
    await bindingsOf(app).delete({ namespace: ns, name: flags.binding });
  } catch (e) {
    throw new CliError(
      `cannot delete APIServiceBinding ${ns}/${flags.binding}: ${messageOf(e)}`,
      'run as a cluster admin of the app cluster',
      ExitCode.Failed,
      { cause: e },
    );
  }
  say(`Deleting APIServiceBinding ${ns}/${flags.binding}: the konnector removes ${what} first.`);
  const started = Date.now();
  let said = '';
  for (;;) {
    const b = await getBinding(app, ns, flags.binding).catch(() => binding);
    if (!b) break;
    const deleting = b.status?.conditions?.find((c) => c.type === 'Deleting')?.message ?? 'waiting for the konnector';
    if (deleting !== said) say(`  ${deleting}`);
    said = deleting;
    if (io.signal.aborted)
      throw new CliError(
        'interrupted; the removal goes on in the cluster',
        `follow it with kubectl bind list -n ${ns}`,
        ExitCode.Interrupted,
      );
    if (Date.now() - started > flags.timeoutMs)
      throw new TimeoutError(
        `APIServiceBinding ${ns}/${flags.binding} is still being deleted after ${formatDuration(flags.timeoutMs)}: ${deleting}`,
        `the konnector must run and reach the provider; follow it with kubectl bind list -n ${ns}`,
      );
    await sleep(500, io.signal);
  }
  say(`The konnector removed the objects and the CRD (${formatDuration(Date.now() - started)}).`);
  await removeGrant(app, ns, flags.binding);
  const secret = binding.spec.kubeconfigSecretRef;
  const others = (
    await bindingsOf(app)
      .list(secret.namespace)
      .catch((): APIServiceBinding[] => [])
  ).filter((b) => b.spec.kubeconfigSecretRef.name === secret.name);
  if (!others.length) {
    await getOrUndefined(app.core.deleteNamespacedSecret({ namespace: secret.namespace, name: secret.name }));
    say(`Deleted Secret ${secret.namespace}/${secret.name} (no other binding uses this provider kubeconfig).`);
  }
  io.stdout.write(`Removed ${flags.binding}.\n`);
  return 0;
}

/**
 * The API's KonnectorApiAccess, every object named `<namespace>-konnector-<binding>`: ClusterRole and binding, and for
 * an API with permission claims the admission policy and binding that bound the konnector's writes. The grant goes
 * first (the konnector loses the rights), then the policy that limited them.
 */
async function removeGrant(app: Cluster, ns: string, binding: string): Promise<void> {
  const name = `${ns}-konnector-${binding}`;
  const objects = [
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
    ['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding'],
    ['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy'],
  ] as const;
  for (const [apiVersion, kind] of objects)
    await getOrUndefined(app.objects.delete({ apiVersion, kind, metadata: { name } })).catch((e: unknown) => {
      throw new CliError(
        `cannot delete ${kind} ${name} (the konnector's access to ${binding}): ${messageOf(e)}`,
        'delete it by hand',
        ExitCode.Failed,
        { cause: e },
      );
    });
}
