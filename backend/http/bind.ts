/**
 * `GET /bind?s&resource&group`: makes or finds the consumer's objects on the provider and hands out the
 * BindingResponse. Two ways in, one way through (`bindFor`):
 *
 * - a browser, with the session cookie of its login: the response goes to the CLI's loopback callback as `?response=`;
 * - a machine, with `Authorization: Bearer <access token>` and the cluster id as `c` (kubectl bind --client-id): the
 *   response is the JSON body.
 *
 * A resource no template exports is refused before anything is created, and so is one the identity may not bind
 * (authz/bind-policy.ts): a 403 naming the API and what is missing, counted and written to the audit log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiName, mayBind, type BindIdentity } from '../authz/bind-policy';
import { recordRefusal } from '../authz/refusals';
import { findExportable } from '../exportable';
import { Names } from '../../lib/names';
import { TooManyClustersError } from '../provision/cluster-namespace';
import { IdentityKindError } from '../provision/consumer';
import { consumerIdentity } from '../provision/identity';
import type { HttpDeps } from './deps';
import { bindingResponse, responseRedirect, type BindingResponse } from '../../exports/bind-api';
import { bearerToken, machineIdentity } from './machine';
import { HttpError, redirect, sendJson } from './respond';
import { checkId, readSession, sessionIdentity } from './session';

export async function handleBind(req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps): Promise<void> {
  const q = url.searchParams;
  const sid = checkId('s', q.get('s'));
  const token = bearerToken(req);
  if (token !== undefined) {
    const who = await machineIdentity(d, token);
    const response = await bindFor(d, { path: 'machine', who, sid, cid: checkId('c', q.get('c')), q });
    sendJson(res, 200, response);
    return;
  }
  const session = await readSession(req, d.sealer, sid);
  const response = await bindFor(d, { path: 'browser', who: sessionIdentity(session), sid, cid: session.cid, q });
  redirect(res, responseRedirect(session.redirectURL, response));
}

interface BindRequest {
  /** Which way of binding, for the audit log: `browser` or `machine`. */
  readonly path: 'browser' | 'machine';
  /** Verified: from the session (a browser login) or the access token (a machine). */
  readonly who: BindIdentity & { readonly issuer: string; readonly subject: string };
  readonly sid: string;
  readonly cid: string;
  readonly q: URLSearchParams;
}

/** The one provisioning path: authorize, provision the consumer identity (provision/identity.ts) recording the binder, build the BindingResponse. */
async function bindFor(d: HttpDeps, r: BindRequest): Promise<BindingResponse> {
  const resource = r.q.get('resource');
  const group = r.q.get('group') ?? '';
  if (!resource) throw new HttpError(400, 'Missing parameter', 'resource is required: pick an API on the resources page');
  // A version of the API (Klutch's export request `versions`): the app cluster gets that version alone.
  const version = r.q.get('version') ?? undefined;
  if (version !== undefined && !Names.isApiVersion(version))
    throw new HttpError(400, 'Bad parameter', `version "${version}" is not a Kubernetes API version (v1, v2beta1, ...)`);
  const exportable = await findExportable(d.exportables, group, resource, version);
  if (!exportable) {
    d.metrics.binds.inc({ result: 'refused' });
    throw new HttpError(
      404,
      'Not offered',
      `No APIServiceExportTemplate of this provider exports ${resource}.${group}${version ? ` in version ${version}` : ''} as a namespaced resource; ${r.path === 'browser' ? `pick one from /resources?s=${r.sid}` : 'GET /resources lists what you may bind'}.`,
    );
  }
  // `system:` names are Kubernetes' and the platform's own: an AppClusterBinding binds as
  // system:appclusterbinding:<namespace>:<name>, and a group system:masters means something to every cluster. An
  // identity provider that issues one would let its user take an AppClusterBinding's consumer, or pass a bind rule.
  const reserved = [r.who.subject, ...r.who.groups].find((n) => n.startsWith('system:'));
  if (reserved !== undefined) {
    d.metrics.binds.inc({ result: 'refused' });
    throw new HttpError(
      403,
      'Login refused',
      `${reserved === r.who.subject ? 'Your identity' : 'Your group'} "${reserved}" begins with "system:", which Kubernetes and this platform keep for themselves; ask the operator of your identity provider not to issue such names.`,
      'reserved-name',
    );
  }
  const decision = mayBind(r.who, exportable.template, d.defaultBindPolicy);
  const api = apiName(exportable.template);
  const name = r.who.clientId !== undefined ? `client ${r.who.clientId}` : r.who.subject;
  if (!decision.allowed) {
    d.metrics.binds.inc({ result: 'refused' });
    const t = exportable.template.metadata;
    recordRefusal(d.metrics.bindRefusals, d.log, {
      path: r.path,
      api,
      template: `${t.namespace}/${t.name}`,
      reason: decision.reason,
      message: decision.message,
      identity: r.who,
      clusterId: r.cid,
    });
    throw new HttpError(403, `Not allowed to bind ${api}`, `${name}: ${decision.message}.`);
  }
  const identity = consumerIdentity(r.who, r.cid);
  const started = performance.now();
  const consumer = await d.provision(identity, r.who).catch((e: unknown) => {
    if (e instanceof TooManyClustersError) {
      d.metrics.binds.inc({ result: 'refused' });
      throw new HttpError(403, 'Too many clusters', e.message);
    }
    if (e instanceof IdentityKindError) {
      d.metrics.binds.inc({ result: 'refused' });
      throw new HttpError(403, 'Login refused', e.message, 'identity-kind');
    }
    throw e;
  });
  const provisionMs = Math.round(performance.now() - started);
  const response = bindingResponse({
    sid: r.sid,
    issuer: r.who.issuer,
    subject: r.who.subject,
    kubeconfig: consumer.kubeconfig,
    group,
    resource,
    ...(version !== undefined ? { version } : {}),
    permissionClaims: exportable.template.spec.permissionClaims ?? [],
  });
  d.metrics.binds.inc({ result: 'ok' });
  d.log.info(
    {
      audit: true,
      event: 'bound',
      path: r.path,
      identity,
      ...(r.who.clientId !== undefined ? { clientId: r.who.clientId } : {}),
      clusterId: r.cid,
      namespace: consumer.namespace,
      api,
      allowedBy: decision.by,
      provisionMs,
    },
    'bound',
  );
  return response;
}
