/**
 * The conversion server: the webhook each multi-version XRD names (apis/xrd.ts), which the API server calls to read
 * or write a composite or claim in another version than the one etcd holds. It answers ConversionReviews with
 * lib/conversion.ts, by the table synth wrote, and refuses a review whose result its target version would not
 * accept — the API server validates a request only in the version it is written in.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerReview, type ConversionReview } from '../lib/conversion';
import type { ConversionTable, ConvertedApi } from './table';
import { versionValidator } from './table';

/** The API server sends at most a list page of objects; far more than that is not a review. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

type Obj = Record<string, unknown>;

export interface ConversionServerOptions {
  readonly table: ConversionTable;
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  /** One line per refused review. */
  readonly log?: (line: string) => void;
}

/** A review's answer for `api`: converted and checked, or a Failure that names the object, field and version. */
function review(api: ConvertedApi, body: ConversionReview, validators: Map<string, (o: Obj) => string | undefined>): Obj {
  const request = body.request;
  const foreign = request?.objects.find((o) => !api.kinds.includes(String(o.kind)));
  const answer = foreign
    ? failure(request?.uid ?? '', `this webhook converts ${api.kinds.join(' and ')}, not ${String(foreign.kind)}`)
    : answerReview(body, api.group, api.conversions);
  const response = answer.response as { uid: string; result: { status: string }; convertedObjects: Obj[] };
  if (response.result.status !== 'Success') return answer;
  for (const o of response.convertedObjects) {
    const version = String(o.apiVersion).split('/').pop() ?? '';
    const problem = validators.get(version)?.(o);
    if (problem) {
      const meta = (o.metadata ?? {}) as { namespace?: string; name?: string };
      const what = `${String(o.kind)} ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? ''}`;
      return failure(
        response.uid,
        `${what}: ${problem} (carried by annotation klutch.anynines.com/conversion-kept or a moved field); fix the value in the version the object was written in`,
      );
    }
  }
  return answer;
}

function failure(uid: string, message: string): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid, result: { status: 'Failure', message }, convertedObjects: [] },
  };
}

/** The request handler: POST `<api path>` with a ConversionReview; `/healthz` for the probes. */
function conversionHandler(o: Pick<ConversionServerOptions, 'table' | 'log'>) {
  const apis = new Map(
    o.table.apis.map((a) => [a.path, { api: a, validators: new Map(a.versions.map((v) => [v.name, versionValidator(v)])) }]),
  );
  return (req: IncomingMessage, res: ServerResponse): void => {
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
      res.end(typeof body === 'string' ? `${body}\n` : JSON.stringify(body));
    };
    const path = new URL(req.url ?? '/', 'https://conversion').pathname;
    if (path === '/healthz') return send(200, 'ok');
    const entry = apis.get(path);
    if (!entry) return send(404, `no API converts at ${path}; the table has ${[...apis.keys()].join(', ') || 'none'}`);
    if (req.method !== 'POST') return send(405, 'POST a ConversionReview');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        send(413, `a ConversionReview of more than ${MAX_BODY_BYTES} bytes`);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      let body: ConversionReview;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ConversionReview;
      } catch {
        return send(400, 'the body is not JSON');
      }
      if (body?.kind !== 'ConversionReview' || !body.request || !Array.isArray(body.request.objects))
        return send(400, 'the body is not a ConversionReview with a request');
      const answer = review(entry.api, body, entry.validators);
      const result = (answer.response as { result: { status: string; message?: string } }).result;
      if (result.status !== 'Success') o.log?.(`refused a review for ${path}: ${result.message}`);
      send(200, answer);
    });
  };
}

/** The server over TLS (the API server calls webhooks only over https). */
export function startConversionServer(o: ConversionServerOptions, port: number, host?: string): Promise<Server> {
  const server = createServer({ cert: o.cert, key: o.key, minVersion: 'TLSv1.2' }, conversionHandler(o));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
