import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { APIServiceExportRequest, APIServiceExportTemplate } from '../../exports/bind-api';
import type { BindDecision } from '../authz/bind-policy';
import { findExportable, type Exportable, type ExportableSource } from '../exportable';
import { CRD_WAIT_MS, FINISHED_TTL_MS, reconcileExportRequest, type ExportRequestDeps } from './export-request.reconcile';

const now = Date.parse('2026-01-01T12:00:00Z');
const at = (s: number) => new Date(now + s * 1000).toISOString();
const ref = { namespace: 'cluster-x', name: 'postgresqlinstances.anynines.com' };
const ctx = { log: pino({ level: 'silent' }) };

const crd = (versions = [{ name: 'v1', served: true, storage: true }]): V1CustomResourceDefinition => ({
  metadata: { name: 'postgresqlinstances.anynines.com' },
  spec: { group: 'anynines.com', scope: 'Namespaced', names: { kind: 'PostgresqlInstance', plural: 'postgresqlinstances' }, versions },
});
const template: APIServiceExportTemplate = {
  apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
  kind: 'APIServiceExportTemplate',
  metadata: { name: 'pg', namespace: 'tpl' },
  spec: { APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances' } },
} as APIServiceExportTemplate;

function request(o: { age?: number; status?: APIServiceExportRequest['status'] } = {}): APIServiceExportRequest {
  return {
    apiVersion: 'klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExportRequest',
    metadata: { name: ref.name, namespace: ref.namespace, creationTimestamp: at(-(o.age ?? 1)) },
    spec: { resources: [{ group: 'anynines.com', resource: 'postgresqlinstances' }] },
    ...(o.status ? { status: o.status } : {}),
  };
}

/** Plain functions; `writes` records every write in order, as `verb what`. */
function world(o: { req?: APIServiceExportRequest; crd?: V1CustomResourceDefinition | null; offered?: boolean; decision?: BindDecision }) {
  const writes: string[] = [];
  const refusals: string[] = [];
  const events: string[] = [];
  const theCrd = o.crd === null ? undefined : (o.crd ?? crd());
  const d: ExportRequestDeps = {
    consumerScope: 'Namespaced',
    crdWaitMs: CRD_WAIT_MS,
    now: () => now,
    getRequest: () => o.req,
    crdExists: () => theCrd !== undefined,
    exportable: async (group, resource): Promise<Exportable | undefined> =>
      o.offered === false || !theCrd ? undefined : { group, resource, kind: 'PostgresqlInstance', template, crd: theCrd },
    mayRequest: async () => ({
      decision: o.decision ?? { allowed: true, by: 'default' },
      binder: { subject: 'alice', groups: [] },
      api: 'postgresqlinstances.anynines.com',
    }),
    refused: (r) => void refusals.push(`${r.path} ${r.api} ${r.reason}`),
    warn: (o, reason, message) => void events.push(`${o.kind} ${o.metadata.namespace}/${o.metadata.name} ${reason}: ${message}`),
    applyExport: async (e) =>
      void writes.push(`apply ${e.metadata.namespace}/${e.metadata.name} v=${e.spec.versions.map((v) => v.name).join(',')}`),
    deleteRequest: async (r) => void writes.push(`delete ${r.namespace}/${r.name}`),
    writeStatus: async (_req, s) =>
      void writes.push(
        `status ${s.phase} ${s.conditions?.map((c) => `${c.type}=${c.status}:${c.reason ?? ''}`).join(' ')}${s.terminalMessage ? ` "${s.terminalMessage}"` : ''}`,
      ),
  };
  return { d, writes, refusals, events };
}

describe('reconcileExportRequest', () => {
  it('applies the derived export, then writes Succeeded once', async () => {
    const w = world({ req: request() });
    expect(await reconcileExportRequest(w.d, ref, ctx)).toEqual({ requeueAfterMs: FINISHED_TTL_MS });
    expect(w.writes).toEqual(['apply cluster-x/postgresqlinstances.anynines.com v=v1', 'status Succeeded ExportsReady=True:']);
  });

  it('waits for a missing CRD (Pending, CRDNotFound) and fails the request after the wait', async () => {
    const waiting = world({ req: request({ age: 5 }), crd: null });
    expect(await reconcileExportRequest(waiting.d, ref, ctx)).toEqual({ requeueAfterMs: 2000 });
    expect(waiting.writes).toEqual(['status Pending ExportsReady=False:CRDNotFound']);
    const late = world({ req: request({ age: 61 }), crd: null });
    await reconcileExportRequest(late.d, ref, ctx);
    expect(late.writes).toEqual([
      'status Failed ExportsReady=False:CRDNotFound "CRD postgresqlinstances.anynines.com does not exist (waited 60s); install it on the provider and request again"',
    ]);
  });

  it('fails an API no template offers, and one the recorded binder may not bind (refusal counted), exporting nothing', async () => {
    const none = world({ req: request(), offered: false });
    await reconcileExportRequest(none.d, ref, ctx);
    expect(none.writes).toEqual([
      'status Failed ExportsReady=False:NotExported "no APIServiceExportTemplate exports postgresqlinstances.anynines.com as a namespaced resource; ask the provider which APIs it offers (/resources)"',
    ]);
    const refused = world({ req: request(), decision: { allowed: false, reason: 'not-allowed', message: 'only group dba may bind it' } });
    await reconcileExportRequest(refused.d, ref, ctx);
    expect(refused.writes).toEqual([
      'status Failed ExportsReady=False:Forbidden "alice: only group dba may bind it, and bind it with kubectl bind"',
    ]);
    expect(refused.refusals).toEqual(['export-request postgresqlinstances.anynines.com not-allowed']);
    // The provider's operator reads the same on the request (kubectl describe, kubectl get events).
    expect(refused.events).toEqual([
      `APIServiceExportRequest ${ref.namespace}/${ref.name} Forbidden: alice: only group dba may bind it, and bind it with kubectl bind`,
    ]);
  });

  it('fails a CRD that serves nothing the template asks for', async () => {
    const w = world({ req: request(), crd: crd([{ name: 'v1', served: false, storage: true }]) });
    await reconcileExportRequest(w.d, ref, ctx);
    expect(w.writes).toHaveLength(1);
    expect(w.writes[0]).toMatch(/^status Failed ExportsReady=False:NotExported "CRD postgresqlinstances.anynines.com serves no version/);
  });

  it('does not rewrite a Pending status the API server handed back with its keys sorted', async () => {
    const first = world({ req: request({ age: 5 }), crd: null });
    let written: APIServiceExportRequest['status'];
    first.d.writeStatus = async (_r, st) => void (written = st);
    await reconcileExportRequest(first.d, ref, ctx);
    const sorted = (o: unknown): unknown =>
      Array.isArray(o)
        ? o.map(sorted)
        : o && typeof o === 'object'
          ? Object.fromEntries(
              Object.entries(o)
                .sort(([a], [b]) => a.localeCompare(b))
                .map(([k, v]) => [k, sorted(v)]),
            )
          : o;
    const again = world({ req: request({ age: 6, status: sorted(written) as APIServiceExportRequest['status'] }), crd: null });
    expect(await reconcileExportRequest(again.d, ref, ctx)).toEqual({ requeueAfterMs: 2000 });
    expect(again.writes).toEqual([]);
  });

  it('writes no status that is already there, and deletes a finished request after ten minutes', async () => {
    const done = world({ req: request() });
    await reconcileExportRequest(done.d, ref, ctx);
    const pendingStatus = world({ req: request({ age: 5 }), crd: null });
    await reconcileExportRequest(pendingStatus.d, ref, ctx);
    const succeeded = request({ age: 5, status: { phase: 'Succeeded' } });
    const young = world({ req: succeeded });
    expect(await reconcileExportRequest(young.d, ref, ctx)).toEqual({ requeueAfterMs: FINISHED_TTL_MS - 5000 });
    expect(young.writes).toEqual([]);
    const old = world({ req: request({ age: 601, status: { phase: 'Failed' } }) });
    expect(await reconcileExportRequest(old.d, ref, ctx)).toBeUndefined();
    expect(old.writes).toEqual(['delete cluster-x/postgresqlinstances.anynines.com']);
  });
});

describe('a request for a version (Klutch’s resources[].versions; issue 36, item 2)', () => {
  const twoVersions = crd([
    { name: 'v1', served: true, storage: false },
    { name: 'v2', served: true, storage: true },
  ]);
  const pinned = (name: string, version: string) =>
    ({
      ...template,
      metadata: { name, namespace: 'tpl' },
      spec: { APIServiceSelector: { ...template.spec.APIServiceSelector, version } },
    }) as APIServiceExportTemplate;
  const src: ExportableSource = { templates: async () => [pinned('pg', 'v1'), pinned('pg-v2', 'v2')], crd: async () => twoVersions };
  const asking = (versions?: string[]) => {
    const req = request();
    const w = world({ req: { ...req, spec: { resources: [{ ...req.spec.resources[0]!, ...(versions ? { versions } : {}) }] } } });
    return { ...w, d: { ...w.d, exportable: (g: string, r: string, v?: string) => findExportable(src, g, r, v) } };
  };

  it('exports the first version asked for that a template offers, and the oldest when none is asked for', async () => {
    for (const [versions, want] of [
      [undefined, 'v1'],
      [['v2'], 'v2'],
      [['v3', 'v2'], 'v2'],
    ] as const) {
      const w = asking(versions ? [...versions] : undefined);
      await reconcileExportRequest(w.d, ref, ctx);
      expect(w.writes[0], `versions ${versions}`).toBe(`apply cluster-x/postgresqlinstances.anynines.com v=${want}`);
    }
  });

  it('fails a request for a version no template offers, naming the version', async () => {
    const w = asking(['v3']);
    await reconcileExportRequest(w.d, ref, ctx);
    expect(w.writes).toEqual([
      'status Failed ExportsReady=False:NotExported "no APIServiceExportTemplate offers postgresqlinstances.anynines.com in version v3; ask the provider which versions it offers, or leave versions out for its default"',
    ]);
  });
});
