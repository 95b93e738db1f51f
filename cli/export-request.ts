/**
 * The APIServiceExportRequest on the provider, as Klutch's CLI makes it: created in the consumer's cluster namespace
 * under its own name, or with `generateName: <name>-` when that name is taken, then polled every second until the
 * backend says Succeeded or Failed. Progress is what the request's conditions say.
 */
import type { APIServiceExportRequest, ExportRequestDocument } from '../exports/bind-api';
import { CliError, ExitCode, TimeoutError } from './errors';
import { isConflict, messageOf } from '../lib/kube-errors';
import { formatDuration } from './duration';
import { bindApi, retryBusy, sleep, type Cluster } from './kube';

const REQUESTS = bindApi('apiserviceexportrequests');

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
  const create = (b: APIServiceExportRequest) =>
    retryBusy(() => provider.custom.createNamespacedCustomObject({ ...REQUESTS, namespace, body: b }) as Promise<APIServiceExportRequest>);
  try {
    try {
      return await create(body);
    } catch (e) {
      if (!isConflict(e)) throw e;
      const { name, ...rest } = body.metadata;
      return await create({ ...body, metadata: { ...rest, generateName: `${name}-` } });
    }
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
  for (;;) {
    if (o.signal.aborted) throw new CliError('interrupted while waiting for the export request', undefined, ExitCode.Interrupted);
    let r: APIServiceExportRequest;
    try {
      r = (await provider.custom.getNamespacedCustomObject({ ...REQUESTS, namespace, name })) as APIServiceExportRequest;
    } catch (e) {
      throw new CliError(
        `cannot read APIServiceExportRequest ${namespace}/${name} on the provider: ${messageOf(e)}`,
        'bind again',
        ExitCode.Failed,
        { cause: e },
      );
    }
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
