/**
 * `GET /resources?s=<sid>`: the logged-in user's choice of APIs, one link per exportable resource. Each link's
 * class contains the plural, as Klutch's page has it, so scripts that click `a.<plural>` work with both.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { exportables } from '../exportable';
import type { HttpDeps } from './deps';
import { escapeHtml, page, sendHtml } from './respond';
import { checkId, readSession } from './session';

export async function handleResources(req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps): Promise<void> {
  const sid = checkId('s', url.searchParams.get('s'));
  const session = await readSession(req, d.sealer, sid);
  const list = await exportables(d.exportables, d.consumerScope);
  const items = list.map((e) => {
    const href = `/bind?s=${encodeURIComponent(sid)}&resource=${encodeURIComponent(e.resource)}&group=${encodeURIComponent(e.group)}`;
    return `<li><a class="bind ${escapeHtml(e.resource)}" href="${escapeHtml(href)}">${escapeHtml(e.kind)}</a> <code>${escapeHtml(`${e.resource}.${e.group}`)}</code></li>`;
  });
  const body = [
    `<h1>${escapeHtml(d.prettyName)}: choose an API to bind</h1>`,
    `<p>Logged in as <strong>${escapeHtml(session.sub)}</strong> for cluster <code>${escapeHtml(session.cid)}</code>.</p>`,
    items.length
      ? `<ul>\n${items.join('\n')}\n</ul>`
      : '<p class="error">No API is offered yet: the provider has no APIServiceExportTemplate whose CRD is installed.</p>',
  ].join('\n');
  sendHtml(res, 200, page(`${d.prettyName}: bind an API`, body));
}
