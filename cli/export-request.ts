/**
 * The APIServiceExportRequest on the provider, as Klutch's CLI makes it: created in the consumer's cluster namespace
 * under its own name, or with `generateName: <name>-` when that name is taken, then polled every second until the
 * backend says Succeeded or Failed. Progress is what the request's conditions say.
 */
import { bindObjects, BindResources, type APIServiceExportRequest, type ExportRequestDocument } from '../exports/bind-api';
import { CliError, ExitCode, TimeoutError } from './errors';
import { messageOf } from '../lib/kube-errors';
import { formatDuration } from './duration';
import { retryBusy, sleep, type Cluster } from './kube';

const requestsOf = (provider: Cluster) => bindObjects<APIServiceExportRequest>(provider.custom, BindResources.exportRequests);

/** The request as it is created: the document without its (empty) status, in `namespace`. */
export function requestObject(doc: ExportRequestDocument, namespace: string): APIServiceExportRequest {
  return {
    apiVersion: doc.apiVersion,
    kind: doc.kind,
    metadata: { name: doc.metadata.name, namespace },
    spec: doc.spec as APIServiceExportRequest['spec'],
  };
}

export async function createExportRequest(
  provider: Cluster,
  namespace: string,
  doc: ExportRequestDocument,
): Promise<APIServiceExportRequest> {
  const body = requestObject(doc, namespace);
  const requests = requestsOf(provider);
  const create = (b: APIServiceExportRequest) => retryBusy(() => requests.create(b));
  try {
    const created = await create(body);
    if (created) return created;
    // The name is taken (an earlier bind's request): a name of its own, as Klutch's CLI does.
    const { name, ...rest } = body.metadata;
    const generated = await create({ ...body, metadata: { ...rest, generateName: `${name}-` } });
    if (generated) return generated;
    throw new Error(`a request named ${name}-<random> exists already`);
  } catch (e) {
    throw new CliError(
      `cannot create APIServiceExportRequest ${doc.metadata.name} in provider namespace ${namespace}: ${messageOf(e)}`,
      'bind again to get fresh credentials; if it persists, ask the provider',
      ExitCode.Failed,
      { cause: e },
    );
  }
}

/** Polls until the request succeeds; throws with the backend's message when it fails or time runs out. */
export async function awaitExportRequest(
  provider: Cluster,
  created: APIServiceExportRequest,
  o: { readonly timeoutMs: number; readonly progress: (line: string) => void; readonly signal: AbortSignal },
): Promise<APIServiceExportRequest> {
  const { name, namespace } = created.metadata as { name: string; namespace: string };
  const deadline = Date.now() + o.timeoutMs;
  let said = '';
  const requests = requestsOf(provider);
  for (;;) {
    if (o.signal.aborted) throw new CliError('interrupted while waiting for the export request', undefined, ExitCode.Interrupted);
    let r: APIServiceExportRequest | undefined;
    try {
      r = await requests.get({ namespace, name });
    } catch (e) {
      throw new CliError(
        `cannot read APIServiceExportRequest ${namespace}/${name} on the provider: ${messageOf(e)}`,
        'bind again',
        ExitCode.Failed,
        { cause: e },
      );
    }
    if (!r)
      throw new CliError(
        `APIServiceExportRequest ${namespace}/${name} is gone from the provider before it succeeded (deleted by someone, or by the backend)`,
        'bind again',
      );
    const phase = r.status?.phase ?? 'Pending';
    if (phase === 'Succeeded') return r;
    if (phase === 'Failed')
      throw new CliError(
        `the provider refused APIServiceExportRequest ${name}: ${r.status?.terminalMessage ?? 'no reason given'}`,
        'ask the provider to offer this API, then bind again',
      );
    const why = r.status?.conditions?.find((c) => c.status !== 'True');
    const line = `waiting for the provider to export ${name}${why?.message ? `: ${why.message}` : ''}`;
    if (line !== said) o.progress(line);
    said = line;
    if (Date.now() > deadline)
      throw new TimeoutError(
        `APIServiceExportRequest ${namespace}/${name} is still ${phase} after ${formatDuration(o.timeoutMs)}`,
        'ask the provider why its backend does not answer export requests (--timeout waits longer)',
      );
    await sleep(1_000, o.signal);
  }
}
