/**
 * `GET /bind?s&resource&group` (with the session): makes or finds the consumer's objects on the provider and sends
 * the BindingResponse to the CLI's loopback callback as `?response=`. A resource no template exports is refused
 * before anything is created, and so is one the user may not bind (authz/bind-policy.ts): a 403 page naming the API
 * and the missing group, counted and written to the audit log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiName, mayBind } from '../authz/bind-policy';
import { recordRefusal } from '../authz/refusals';
import { findExportable } from '../exportable';
import { TooManyClustersError } from '../provision/cluster-namespace';
import type { HttpDeps } from './deps';
import { bindingResponse, responseRedirect } from '../../exports/bind-api';
import { HttpError, redirect } from './respond';
import { checkId, readSession, sessionIdentity } from './session';

export async function handleBind(req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps): Promise<void> {
  const q = url.searchParams;
  const sid = checkId('s', q.get('s'));
  const session = await readSession(req, d.sealer, sid);
  const resource = q.get('resource');
  const group = q.get('group') ?? '';
  if (!resource) throw new HttpError(400, 'Missing parameter', 'resource is required: pick an API on the resources page');
  const exportable = await findExportable(d.exportables, d.consumerScope, group, resource);
  if (!exportable) {
    d.metrics.binds.inc({ result: 'refused' });
    throw new HttpError(
      404,
      'Not offered',
      `No APIServiceExportTemplate of this provider exports ${resource}.${group}${d.consumerScope === 'Namespaced' ? ' as a namespaced resource' : ''}; pick one from /resources?s=${sid}.`,
    );
  }
  const who = sessionIdentity(session);
  const decision = mayBind(who, exportable.template, d.defaultBindPolicy);
  const api = apiName(exportable.template);
  if (!decision.allowed) {
    d.metrics.binds.inc({ result: 'refused' });
    const t = exportable.template.metadata;
    recordRefusal(d.metrics.bindRefusals, d.log, {
      path: 'browser',
      api,
      template: `${t.namespace}/${t.name}`,
      reason: decision.reason,
      message: decision.message,
      identity: who,
      clusterId: session.cid,
    });
    throw new HttpError(403, `Not allowed to bind ${api}`, `${session.sub}: ${decision.message}.`);
  }
  const identity = `${session.sub}#${session.cid}`;
  const started = performance.now();
  const consumer = await d.provision(identity).catch((e: unknown) => {
    if (!(e instanceof TooManyClustersError)) throw e;
    d.metrics.binds.inc({ result: 'refused' });
    throw new HttpError(403, 'Too many clusters', e.message);
  });
  await d.recordBinder(consumer.namespace, who);
  const provisionMs = Math.round(performance.now() - started);
  const response = bindingResponse({
    sid,
    issuer: session.iss,
    subject: session.sub,
    kubeconfig: consumer.kubeconfig,
    group,
    resource,
    permissionClaims: exportable.template.spec.permissionClaims ?? [],
  });
  d.metrics.binds.inc({ result: 'ok' });
  d.log.info(
    {
      audit: true,
      event: 'bound',
      identity,
      clusterId: session.cid,
      namespace: consumer.namespace,
      api,
      allowedBy: decision.by,
      provisionMs,
    },
    'bound',
  );
  redirect(res, responseRedirect(session.redirectURL, response));
}
