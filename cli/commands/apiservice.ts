/**
 * `kubectl bind apiservice`: what happens after a login, and what Klutch's CLI runs as its own command — for each
 * APIServiceExportRequest: create it on the provider and wait for it, ask about each permission claim, install or
 * upgrade the konnector with access to the API, create the APIServiceBinding, wait for the konnector to report it
 * Ready, and print what is bound and how to create a first claim. `--dry-run` prints the objects instead.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';
import type { AcceptablePermissionClaim, APIServiceExport, ExportRequestDocument, PermissionClaim } from '../../exports/bind-api';
import { bindObjects, BindResources, KUBECONFIG_SECRET_KEY, Kinds } from '../../exports/bind-api';
import { applyBinding, awaitReady, bindingObject, readyOf } from '../binding';
import { exampleClaimYaml } from '../claim-example';
import { formatDuration } from '../duration';
import { CliError, ExitCode, TimeoutError } from '../errors';
import { messageOf } from '../../lib/kube-errors';
import { awaitExportRequest, createExportRequest, requestObject } from '../export-request';
import type { ApiServiceFlags, BindFlags } from '../flags';
import { Answers, type Io } from '../io';
import { appCluster, getOrUndefined, providerCluster, type Cluster } from '../kube';
import { storeKubeconfig } from '../kubeconfig-secret';
import { providerKubeconfig } from '../provider-kubeconfig';
import { awaitBindingsServed, installKonnector, konnectorManifests, type Grant } from '../konnector-install';
import { answerClaims } from '../permission-claims';
import { konnectorTrouble } from '../konnector-pods';
import { table } from '../table';

export interface BindContext {
  readonly app: Cluster;
  readonly provider: { readonly cluster: Cluster; readonly namespace: string; readonly prettyName: string };
  /** The provider kubeconfig Secret in `flags.namespace` (a placeholder in a dry run). */
  readonly secret: string;
  readonly requests: readonly ExportRequestDocument[];
  readonly flags: BindFlags;
  readonly io: Io;
}

/** Claimed core resources the konnector copies. */
const COPIED = ['secrets', 'configmaps'] as const;

const grantFor = (group: string, resource: string, claims: readonly AcceptablePermissionClaim[]): Grant => ({
  group,
  resource,
  claimed: COPIED.filter((r) => claims.some((c) => c.state === 'Accepted' && !c.group && c.resource === r)),
});

export async function bindApiServices(c: BindContext): Promise<number> {
  if (c.flags.dryRun) return dryRun(c);
  const { io, flags } = c;
  const say = (line: string) => io.stderr.write(`${line}\n`);
  const answers = new Answers(io.stdin, io.signal);
  try {
    const bound: { name: string; exp: APIServiceExport; claims: AcceptablePermissionClaim[] }[] = [];
    for (const doc of c.requests) {
      const created = await createExportRequest(c.provider.cluster, c.provider.namespace, doc);
      say(`Created APIServiceExportRequest ${created.metadata.name} in provider namespace ${c.provider.namespace}.`);
      const started = Date.now();
      await awaitExportRequest(c.provider.cluster, created, { timeoutMs: flags.timeoutMs, progress: say, signal: io.signal });
      say(`The provider exported it (${formatDuration(Date.now() - started)}).`);
      for (const r of doc.spec.resources) {
        const name = `${r.resource}.${r.group ?? ''}`;
        const exp = await bindObjects<APIServiceExport>(c.provider.cluster.custom, BindResources.exports)
          .get({ namespace: c.provider.namespace, name })
          .catch((e: unknown) => {
            throw new CliError(`cannot read APIServiceExport ${name} on the provider: ${messageOf(e)}`, 'bind again', ExitCode.Failed, {
              cause: e,
            });
          });
        if (!exp)
          throw new CliError(
            `the provider reports the request done, but has no APIServiceExport ${name} in namespace ${c.provider.namespace}`,
            'ask the provider',
          );
        const claims = await answerClaims(exp.spec.permissionClaims ?? r.permissionClaims ?? [], {
          acceptAll: flags.acceptPermissionClaims,
          answers,
          out: io.stdout,
          provider: c.provider.prettyName,
          api: exp.spec.names.kind,
        });
        bound.push({ name, exp, claims });
      }
    }
    const grants = bound.map((b) => grantFor(b.exp.spec.group, b.exp.spec.names.plural, b.claims));
    if (flags.skipKonnector) {
      say(
        `Skipped the konnector (--skip-konnector). The konnector serving this cluster needs access to ${grants.map((g) => `${g.resource}.${g.group}`).join(', ')}: the same command with --dry-run=client prints the ClusterRoles and bindings that grant it.`,
      );
    } else {
      const r = await installKonnector(c.app, {
        namespace: flags.namespace,
        grants,
        downgrade: flags.downgradeKonnector,
        ...(flags.konnectorImage ? { image: flags.konnectorImage } : {}),
        ...(flags.konnectorImagePullSecret ? { imagePullSecret: flags.konnectorImagePullSecret } : {}),
      });
      say(
        r.konnector === 'kept newer'
          ? `Kept the konnector that runs, ${r.image}; granted it access (--downgrade-konnector replaces it).`
          : `Konnector ${r.konnector} in namespace ${flags.namespace} (${r.image}), with access to ${grants.map((g) => `${g.resource}.${g.group}`).join(', ')}.`,
      );
    }
    await awaitBindingsServed(c.app, flags.namespace, 60_000, io.signal);
    const results = [];
    for (const b of bound) {
      const action = await applyBinding(c.app, bindingObject(b.name, flags.namespace, c.secret, b.claims));
      say(`APIServiceBinding ${flags.namespace}/${b.name} ${action}.`);
      const r =
        flags.waitMs > 0
          ? await awaitReady(c.app, flags.namespace, b.name, { timeoutMs: flags.waitMs, progress: say, signal: io.signal })
          : { ready: false, binding: undefined };
      results.push({ ...b, ...r });
    }
    io.stdout.write(`\n${summary(c, results)}`);
    const late = results.filter((r) => flags.waitMs > 0 && !r.ready);
    // A binding without status: most often a konnector Pod that cannot start; say which and why.
    const silent = late.some((r) => !readyOf(r.binding)?.message) && !flags.skipKonnector;
    const trouble = silent ? await konnectorTrouble(c.app.core, flags.namespace).catch(() => undefined) : undefined;
    if (late.length)
      throw new TimeoutError(
        `${late.map((r) => r.name).join(', ')} not Ready after ${formatDuration(flags.waitMs)}: ${late.map((r) => readyOf(r.binding)?.message ?? trouble ?? 'the konnector has not reported').join('; ')}`,
        `the binding exists; check the konnector (kubectl -n ${flags.namespace} get deploy ${'konnector'}) and follow it with kubectl bind list`,
      );
    return 0;
  } finally {
    answers.close();
  }
}

function summary(
  c: BindContext,
  results: readonly {
    name: string;
    exp: APIServiceExport;
    claims: readonly AcceptablePermissionClaim[];
    ready: boolean;
    binding?: unknown;
  }[],
): string {
  const rows = results.map((r) => [
    r.name,
    `${r.exp.spec.names.kind} (${r.exp.spec.group}/${r.exp.spec.versions.find((v) => v.storage)?.name ?? r.exp.spec.versions[0]?.name})`,
    c.provider.prettyName,
    c.flags.waitMs > 0 ? (r.ready ? 'True' : 'False') : 'not checked',
    r.claims.length ? r.claims.map((x) => `${x.resource}: ${x.state}`).join(', ') : '-',
  ]);
  const first = results[0]!;
  const plural = first.exp.spec.names.plural;
  const example = exampleClaimYaml(first.exp, `my-${first.exp.spec.names.singular ?? first.exp.spec.names.kind.toLowerCase()}`, 'default')
    .trimEnd()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
  return [
    table(['BINDING', 'RESOURCE', 'PROVIDER', 'READY', 'PERMISSION CLAIMS'], rows),
    `Create a first claim (the fields: kubectl explain ${plural}.spec):`,
    '',
    `  kubectl apply -f - <<'EOF'`,
    example,
    `  EOF`,
    '',
    `Then watch it: kubectl get ${plural} -n default -w  (the konnector copies it to the provider and its status back)`,
    '',
  ].join('\n');
}

function dryRun(c: BindContext): number {
  const { flags } = c;
  const objects: Record<string, unknown>[] = [];
  const grants: Grant[] = [];
  for (const doc of c.requests) {
    objects.push(requestObject(doc, c.provider.namespace) as unknown as Record<string, unknown>);
    for (const r of doc.spec.resources) {
      const claims: AcceptablePermissionClaim[] = (r.permissionClaims ?? []).map((p: PermissionClaim) => ({
        ...p,
        state: flags.acceptPermissionClaims ? 'Accepted' : 'Rejected',
      }));
      grants.push(grantFor(r.group ?? '', r.resource, claims));
      objects.push(
        bindingObject(`${r.resource}.${r.group ?? ''}`, flags.namespace, c.secret, claims) as unknown as Record<string, unknown>,
      );
    }
  }
  // Without the konnector, its access to each API still: what whoever runs one must grant it.
  objects.splice(
    1,
    0,
    ...konnectorManifests({
      namespace: flags.namespace,
      grants,
      konnector: !flags.skipKonnector,
      ...(flags.konnectorImage ? { image: flags.konnectorImage } : {}),
      ...(flags.konnectorImagePullSecret ? { imagePullSecret: flags.konnectorImagePullSecret } : {}),
    }),
  );
  const note = flags.acceptPermissionClaims
    ? ''
    : '# permission claims show as Rejected: kubectl bind asks about each (or --accept-permission-claims accepts them)\n';
  if (flags.output === 'json') c.io.stdout.write(`${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`);
  else c.io.stdout.write(note + objects.map((o) => `---\n${stringify(o)}`).join(''));
  c.io.stderr.write(`Dry run: none of these ${objects.length} objects was created.\n`);
  return 0;
}

/** Reads the request file (YAML or JSON, several documents allowed; '-' is stdin). */
export function readRequests(file: string, stdin: string | undefined): ExportRequestDocument[] {
  let text: string;
  try {
    text = file === '-' ? (stdin ?? '') : readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`, 'pass the APIServiceExportRequest file with -f', ExitCode.Failed, {
      cause: e,
    });
  }
  const parsed = parseAllDocuments(text);
  // The parser's own words and place, as kubectl reports a file it cannot read (no half-read document bound).
  for (const d of Array.isArray(parsed) ? parsed : [])
    for (const e of d.errors) {
      const at = e.linePos?.[0];
      throw new CliError(
        `${file}${at ? `:${at.line}:${at.col}` : ''}: not YAML: ${e.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '')}`,
        'fix the file, or pass the request the bind backend handed out as it is',
        ExitCode.Usage,
        { cause: e },
      );
    }
  const docs = (Array.isArray(parsed) ? parsed : [])
    .map((d) => d.toJS() as ExportRequestDocument | null)
    .filter((d): d is ExportRequestDocument => d !== null);
  if (!docs.length) throw new CliError(`${file} holds no APIServiceExportRequest`, 'pass the request the bind backend handed out');
  for (const d of docs)
    if (d.kind !== Kinds.APIServiceExportRequest || !d.metadata?.name || !d.spec?.resources?.length)
      throw new CliError(
        `${file}: a document is kind "${d.kind}" named "${d.metadata?.name}" with ${d.spec?.resources?.length ?? 0} resources; each must be an APIServiceExportRequest with a name and spec.resources`,
        'pass the request the bind backend handed out',
      );
  return docs;
}

export async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function apiServiceCommand(flags: ApiServiceFlags, io: Io): Promise<number> {
  const requests = readRequests(flags.file, flags.file === '-' ? await readStdin(io) : undefined);
  const app = appCluster(flags, io.env);
  let kubeconfig: string;
  let secret: string;
  let where: string;
  if (flags.remoteKubeconfig) {
    where = `--remote-kubeconfig ${flags.remoteKubeconfig}`;
    try {
      // Stored reduced (the konnector gets only server, CA, namespace and token), with --remote-namespace in it.
      kubeconfig = providerKubeconfig(readFileSync(flags.remoteKubeconfig, 'utf8'), where, flags.remoteNamespace).yaml;
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError(
        `cannot read --remote-kubeconfig ${flags.remoteKubeconfig}: ${(e as Error).message}`,
        'pass the provider kubeconfig file',
        ExitCode.Failed,
        { cause: e },
      );
    }
    secret = flags.dryRun ? 'kubeconfig-<generated>' : (await storeKubeconfig(app, flags.namespace, kubeconfig)).name;
  } else {
    const ns = flags.remoteKubeconfigNamespace ?? flags.namespace;
    const s = await getOrUndefined(app.core.readNamespacedSecret({ namespace: ns, name: flags.remoteKubeconfigName! })).catch(
      (e: unknown) => {
        throw new CliError(
          `cannot read Secret ${ns}/${flags.remoteKubeconfigName}: ${messageOf(e)}`,
          'run as a user who may read it',
          ExitCode.Failed,
          { cause: e },
        );
      },
    );
    const raw = s?.data?.[KUBECONFIG_SECRET_KEY];
    if (!raw)
      throw new CliError(
        `Secret ${ns}/${flags.remoteKubeconfigName} ${s ? `has no key "${KUBECONFIG_SECRET_KEY}"` : 'does not exist'}`,
        'name the Secret kubectl bind stored (kubeconfig-*), or pass --remote-kubeconfig <file>',
      );
    if (ns !== flags.namespace)
      throw new CliError(
        `the provider kubeconfig Secret must be in the konnector's namespace ${flags.namespace}, not ${ns}`,
        `pass -n ${ns}, or copy the Secret into ${flags.namespace}`,
      );
    kubeconfig = Buffer.from(raw, 'base64').toString('utf8');
    secret = flags.remoteKubeconfigName!;
    where = `Secret ${ns}/${secret} key "${KUBECONFIG_SECRET_KEY}"`;
  }
  const provider = providerCluster(kubeconfig, flags.remoteNamespace, where);
  return bindApiServices({
    app,
    provider: { ...provider, prettyName: provider.cluster.server },
    secret,
    requests,
    flags,
    io,
  });
}
