/**
 * Where the claims controller reads claimed Secrets/ConfigMaps of one provider namespace from, with whatever access
 * the provider gives:
 *
 * - namespace-wide: when the consumer may list the resource in the namespace (Klutch's backend, ours with
 *   `--claimed-access=Namespace`; asked with a SelfSubjectAccessReview), one informer over the namespace, as before;
 * - per object: otherwise the backend shares exactly the objects a claim owns, by name, in the Role `CLAIMED_ROLE`
 *   of that namespace. The Role is watched (by name), and every object its rules name for this resource is watched on
 *   its own (`fieldSelector=metadata.name=<name>`, which RBAC authorizes as a request for that name). A name that
 *   leaves the Role is reported deleted, so its copy goes; nothing else of the namespace is ever listed.
 *
 * Either way it is one informer to the controller: the same cache reads and add/update/delete events.
 */
import type { AuthorizationV1Api, KubeConfig, V1PolicyRule, V1Role } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { watchInformer, type InformerEvent, type InformerObject, type WatchInformer } from '../../../../controller';
import { CLAIMED_ROLE } from '../../../../exports/bind-api';
import { messageOf } from '../../../../lib/kube-errors';
import type { Listed } from '../../../kube/objects';
import { trimForCache } from '../../../kube/trim';

export interface ClaimedSourceOptions {
  readonly kc: KubeConfig;
  readonly authz: AuthorizationV1Api;
  readonly namespace: string;
  /** A core resource: `secrets` or `configmaps`. */
  readonly resource: string;
  readonly log?: Logger;
  /** Retry delay of a failed access review. @default 2_000 */
  readonly retryMs?: number;
}

/** The names the Role shares of a core `resource` (rules without resourceNames share nothing by name). */
export function sharedNames(role: V1Role | undefined, resource: string): Set<string> {
  const names = new Set<string>();
  const reads = (r: V1PolicyRule) => r.verbs.some((v) => v === 'get' || v === '*');
  for (const r of role?.rules ?? [])
    if ((r.apiGroups ?? []).includes('') && (r.resources ?? []).includes(resource) && reads(r))
      for (const n of r.resourceNames ?? []) if (n) names.add(n);
  return names;
}

export function claimedSource(o: ClaimedSourceOptions): WatchInformer<Listed> {
  const ns = o.namespace;
  const listeners = { add: new Set<(x: Listed) => void>(), update: new Set(), delete: new Set() } as Record<
    InformerEvent,
    Set<(x: Listed) => void>
  >;
  const emit = (e: InformerEvent, x: Listed) => listeners[e].forEach((cb) => cb(x));
  const forward = (inf: WatchInformer<Listed>) => {
    for (const e of ['add', 'update', 'delete'] as const) inf.on(e, (x) => emit(e, x));
  };
  const path = `/api/v1/namespaces/${ns}/${o.resource}`;

  let stopped = false;
  let decisionError: string | undefined;
  let retry: NodeJS.Timeout | undefined;
  /** Namespace-wide: the one informer. */
  let wide: WatchInformer<Listed> | undefined;
  /** Per object: the Role, and one informer per shared name. */
  let role: WatchInformer<V1Role> | undefined;
  const trim = trimForCache<Listed>();
  const named = new Map<string, WatchInformer<Listed>>();
  let markSynced: () => void = () => {};
  const synced = new Promise<void>((r) => (markSynced = r));

  const follow = () => {
    const want = sharedNames(role?.get(CLAIMED_ROLE, ns), o.resource);
    for (const [name, inf] of named) {
      if (want.has(name)) continue;
      named.delete(name);
      const last = inf.get(name, ns);
      void inf.stop();
      if (last) emit('delete', last); // no longer shared: the copy goes
    }
    for (const name of want) {
      if (named.has(name) || stopped) continue;
      const inf = watchInformer<Listed>({ kc: o.kc, path, fieldSelector: `metadata.name=${name}`, log: o.log, transform: trim });
      forward(inf);
      named.set(name, inf);
      void inf.start();
    }
  };

  const decide = async (): Promise<void> => {
    if (stopped) return;
    let allowed: boolean;
    try {
      const r = await o.authz.createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: { group: '', resource: o.resource, verb: 'list', namespace: ns } } },
      });
      allowed = r.status?.allowed === true;
      decisionError = undefined;
    } catch (e) {
      decisionError = `cannot ask the provider whether the konnector may list ${o.resource} in ${ns}: ${messageOf(e)}`;
      retry = setTimeout(() => void decide(), o.retryMs ?? 2_000);
      return;
    }
    if (stopped) return;
    if (allowed) {
      wide = watchInformer<Listed>({ kc: o.kc, path, log: o.log, transform: trim });
      forward(wide);
      void wide.synced.then(markSynced);
      await wide.start();
      return;
    }
    o.log?.info(
      { namespace: ns, resource: o.resource, role: CLAIMED_ROLE },
      'no list access: reading only the objects the provider shares by name',
    );
    role = watchInformer<V1Role>({
      kc: o.kc,
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
      fieldSelector: `metadata.name=${CLAIMED_ROLE}`,
      log: o.log,
    });
    for (const e of ['add', 'update', 'delete'] as const) role.on(e, follow);
    void role.synced.then(() => {
      follow();
      markSynced();
    });
    await role.start();
  };

  const informers = (): WatchInformer<InformerObject>[] => [...(wide ? [wide] : []), ...(role ? [role] : []), ...named.values()];
  return {
    get: (name, namespace) => (wide ? wide.get(name, namespace) : named.get(name)?.get(name, namespace)),
    list: (namespace) => (wide ? wide.list(namespace) : [...named.values()].flatMap((i) => i.list(namespace))),
    synced,
    hasSynced: () => (wide ?? role)?.hasSynced() ?? false,
    on: (e, cb) => void listeners[e].add(cb),
    off: (e, cb) => void listeners[e].delete(cb),
    lastError: () => {
      if (decisionError) return decisionError;
      const e = (wide ?? role)?.lastError();
      if (e) return role ? `the Role ${ns}/${CLAIMED_ROLE} that shares claimed ${o.resource}: ${e}` : e;
      for (const [name, inf] of named) {
        const err = inf.lastError();
        if (err) return `${o.resource} ${ns}/${name} (shared by Role ${CLAIMED_ROLE}): ${err}`;
      }
      return undefined;
    },
    start: async () => {
      stopped = false;
      await decide();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      const all = informers();
      named.clear();
      await Promise.all(all.map((i) => i.stop()));
    },
  };
}
