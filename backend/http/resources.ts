/**
 * `GET /resources?s=<sid>`: the logged-in user's choice of APIs, one link per exportable resource the user may bind
 * (authz/bind-policy.ts). Each link's class contains the plural, as Klutch's page has it, so scripts that click
 * `a.<plural>` work with both. With a machine's access token (`Authorization: Bearer`, no session) the same list is
 * JSON: `{"items": [{"group", "resource", "kind"}], "hidden": <how many more are offered to others>}`. An API offered in
 * more than one version lists them (`versions` in JSON; a link per version on the page, `/bind?...&version=`), each
 * only where the template of that version lets the caller bind it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mayBind } from '../authz/bind-policy';
import { exportables, offeredVersions } from '../exportable';
import type { HttpDeps } from './deps';
import { bearerToken, machineIdentity } from './machine';
import { escapeHtml, page, sendHtml, sendJson } from './respond';
import { checkId, readSession, sessionIdentity } from './session';

export async function handleResources(req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps): Promise<void> {
  const token = bearerToken(req);
  if (token !== undefined) {
    const who = await machineIdentity(d, token);
    const all = await exportables(d.exportables);
    const items = await Promise.all(
      all
        .filter((e) => mayBind(who, e.template, d.defaultBindPolicy).allowed)
        .map(async (e) => {
          const versions = (await offeredVersions(d.exportables, e)).filter((v) => mayBind(who, v.template, d.defaultBindPolicy).allowed);
          return {
            group: e.group,
            resource: e.resource,
            kind: e.kind,
            ...(versions.length > 1 ? { versions: versions.map((v) => v.version) } : {}),
          };
        }),
    );
    sendJson(res, 200, { items, hidden: all.length - items.length });
    return;
  }
  const sid = checkId('s', url.searchParams.get('s'));
  const session = await readSession(req, d.sealer, sid);
  const all = await exportables(d.exportables);
  const identity = sessionIdentity(session);
  const list = all.filter((e) => mayBind(identity, e.template, d.defaultBindPolicy).allowed);
  const items = await Promise.all(
    list.map(async (e) => {
      const href = `/bind?s=${encodeURIComponent(sid)}&resource=${encodeURIComponent(e.resource)}&group=${encodeURIComponent(e.group)}`;
      const versions = await offeredVersions(d.exportables, e);
      // An API offered in more than one version: its default (the link Klutch's scripts click) and each version alone.
      const choices =
        versions.length > 1
          ? ` in ${versions
              .filter((v) => mayBind(identity, v.template, d.defaultBindPolicy).allowed)
              .map(
                (v) =>
                  `<a class="bind-version" href="${escapeHtml(`${href}&version=${encodeURIComponent(v.version)}`)}">${escapeHtml(v.version)}</a>${v.deprecated ? ' (deprecated)' : ''}`,
              )
              .join(', ')}`
          : '';
      return `<li><a class="bind ${escapeHtml(e.resource)}" href="${escapeHtml(href)}">${escapeHtml(e.kind)}</a> <code>${escapeHtml(`${e.resource}.${e.group}`)}</code>${choices}</li>`;
    }),
  );
  // Which APIs are hidden is not said: their names are for those who may bind them.
  const hidden =
    all.length > list.length
      ? `<p>${all.length - list.length} more API${all.length - list.length > 1 ? 's are' : ' is'} offered only to members of certain groups; ask the platform operator if you need one.</p>`
      : '';
  const body = [
    `<h1>${escapeHtml(d.prettyName)}: choose an API to bind</h1>`,
    `<p>Logged in as <strong>${escapeHtml(session.sub)}</strong> for cluster <code>${escapeHtml(session.cid)}</code>.</p>`,
    items.length
      ? `<ul>\n${items.join('\n')}\n</ul>`
      : all.length
        ? '<p class="error">No API of this provider may be bound by you.</p>'
        : '<p class="error">No API is offered yet: the provider has no APIServiceExportTemplate whose CRD is installed.</p>',
    hidden,
  ]
    .filter(Boolean)
    .join('\n');
  sendHtml(res, 200, page(`${d.prettyName}: bind an API`, body));
}
