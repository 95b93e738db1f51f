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
 *
 * The choice is not made once: RBAC changes, and an API server's authorizer lags the RoleBinding it was just given
 * (a review right after the provider namespace appears may say no). Whenever a read is refused (403), the access is
 * asked again; when the answer differs, the other view starts beside the current one and replaces it only once it
 * has listed, so a refusal never empties the cache (a copy in the app cluster goes only when a view that could read
 * says its object is not shared).
 */
import type { AuthorizationV1Api, KubeConfig, V1PolicyRule, V1Role } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { watchInformer, type InformerEvent, type WatchInformer } from '../../../../controller';
import { CLAIMED_ROLE } from '../../../../exports/bind-api';
import { isForbidden, messageOf } from '../../../../lib/kube-errors';
import type { Listed } from '../../../kube/objects';
import { trimForCache } from '../../../kube/trim';

export interface ClaimedSourceOptions {
  readonly kc: KubeConfig;
  readonly authz: AuthorizationV1Api;
  readonly namespace: string;
  /** A core resource: `secrets` or `configmaps`. */
  readonly resource: string;
  readonly log?: Logger;
  /** Delay before access is asked again, after a failed review or a refused read. @default 2_000 */
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

/** One way of reading the namespace's claimed objects. */
interface View {
  readonly wide: boolean;
  get(name: string, namespace?: string): Listed | undefined;
  list(namespace?: string): readonly Listed[];
  readonly synced: Promise<void>;
  hasSynced(): boolean;
  lastError(): string | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface ViewContext {
  readonly o: ClaimedSourceOptions;
  /** An event of the view's objects. */
  emit(this: void, view: View, e: InformerEvent, x: Listed): void;
  /** A read the provider refused. */
  forbidden(this: void): void;
}

const pathOf = (o: ClaimedSourceOptions) => `/api/v1/namespaces/${o.namespace}/${o.resource}`;
const onError = (c: ViewContext) => (e: unknown) => {
  if (isForbidden(e)) c.forbidden();
};

/** Every object of the resource in the namespace, in one informer. */
function wideView(c: ViewContext): View {
  const inf = watchInformer<Listed>({ kc: c.o.kc, path: pathOf(c.o), log: c.o.log, transform: trimForCache(), onError: onError(c) });
  const view: View = {
    wide: true,
    get: (name, namespace) => inf.get(name, namespace),
    list: (namespace) => inf.list(namespace),
    synced: inf.synced,
    hasSynced: () => inf.hasSynced(),
    lastError: () => inf.lastError(),
    start: () => inf.start(),
    stop: () => inf.stop(),
  };
  for (const e of ['add', 'update', 'delete'] as const) inf.on(e, (x) => c.emit(view, e, x));
  return view;
}

/** The Role `CLAIMED_ROLE`, and one informer per object it shares by name. */
function namedView(c: ViewContext): View {
  const { o } = c;
  const ns = o.namespace;
  const trim = trimForCache<Listed>();
  const named = new Map<string, WatchInformer<Listed>>();
  let stopped = false;
  let synced = false;
  const role = watchInformer<V1Role>({
    kc: o.kc,
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
    fieldSelector: `metadata.name=${CLAIMED_ROLE}`,
    log: o.log,
    onError: onError(c),
  });
  const follow = () => {
    const want = sharedNames(role.get(CLAIMED_ROLE, ns), o.resource);
    for (const [name, inf] of named) {
      if (want.has(name)) continue;
      named.delete(name);
      const last = inf.get(name, ns);
      void inf.stop();
      if (last) c.emit(view, 'delete', last); // no longer shared: the copy goes
    }
    for (const name of want) {
      if (named.has(name) || stopped) continue;
      const inf = watchInformer<Listed>({ kc: o.kc, path: pathOf(o), fieldSelector: `metadata.name=${name}`, log: o.log, transform: trim });
      for (const e of ['add', 'update', 'delete'] as const) inf.on(e, (x) => c.emit(view, e, x));
      named.set(name, inf);
      void inf.synced.then(check);
      void inf.start();
    }
    check();
  };
  for (const e of ['add', 'update', 'delete'] as const) role.on(e, follow);
  // Listed once the Role is, and every object it names is (one it stops naming before that no longer counts).
  let markListed: () => void = () => {};
  const listed = new Promise<void>((r) => (markListed = r));
  function check(): void {
    if (synced || !role.hasSynced() || ![...named.values()].every((i) => i.hasSynced())) return;
    synced = true;
    markListed();
  }
  void role.synced.then(follow);
  const view: View = {
    wide: false,
    get: (name, namespace) => named.get(name)?.get(name, namespace),
    list: (namespace) => [...named.values()].flatMap((i) => i.list(namespace)),
    synced: listed,
    hasSynced: () => synced,
    lastError: () => {
      const e = role.lastError();
      if (e) return `the Role ${ns}/${CLAIMED_ROLE} that shares claimed ${o.resource}: ${e}`;
      for (const [name, inf] of named) {
        const err = inf.lastError();
        if (err) return `${o.resource} ${ns}/${name} (shared by Role ${CLAIMED_ROLE}): ${err}`;
      }
      return undefined;
    },
    start: () => role.start(),
    stop: async () => {
      stopped = true;
      const all = [role, ...named.values()];
      named.clear();
      await Promise.all(all.map((i) => i.stop()));
    },
  };
  return view;
}

export function claimedSource(o: ClaimedSourceOptions): WatchInformer<Listed> {
  const ns = o.namespace;
  const listeners = { add: new Set<(x: Listed) => void>(), update: new Set(), delete: new Set() } as Record<
    InformerEvent,
    Set<(x: Listed) => void>
  >;
  const emit = (e: InformerEvent, x: Listed) => listeners[e].forEach((cb) => cb(x));

  let stopped = false;
  let decisionError: string | undefined;
  let recheck: NodeJS.Timeout | undefined;
  /** The view reads and events come from; the one that replaces it once it has listed. */
  let current: View | undefined;
  let next: View | undefined;
  let markSynced: () => void = () => {};
  const synced = new Promise<void>((r) => (markSynced = r));

  const askAgain = () => {
    if (stopped || recheck) return;
    recheck = setTimeout(() => {
      recheck = undefined;
      void decide();
    }, o.retryMs ?? 2_000);
  };
  const context: ViewContext = {
    o,
    emit: (view, e, x) => {
      if (view === current) emit(e, x);
    },
    forbidden: askAgain,
  };

  /** `view` has listed: it is current from now on, and the controller hears what changed. */
  const promote = (view: View) => {
    if (stopped) return;
    if (view === next && current) {
      const old = current;
      current = view;
      next = undefined;
      for (const x of view.list()) emit('add', x);
      for (const x of old.list()) if (!view.get(x.metadata!.name!, x.metadata!.namespace)) emit('delete', x);
      void old.stop();
    }
    if (view === current) markSynced();
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
      askAgain();
      return;
    }
    if (stopped) return;
    if (current?.wide === allowed) {
      // The answer has not changed (a refused read is the view's own to retry); a view on its way is not needed.
      void next?.stop();
      next = undefined;
      return;
    }
    if (next?.wide === allowed) return;
    void next?.stop();
    const view = allowed ? wideView(context) : namedView(context);
    if (current) next = view;
    else current = view;
    o.log?.info(
      { namespace: ns, resource: o.resource, role: CLAIMED_ROLE },
      allowed ? 'list access: reading the namespace' : 'no list access: reading only the objects the provider shares by name',
    );
    void view.synced.then(() => promote(view));
    await view.start();
  };

  return {
    get: (name, namespace) => current?.get(name, namespace),
    list: (namespace) => current?.list(namespace) ?? [],
    synced,
    hasSynced: () => current?.hasSynced() ?? false,
    on: (e, cb) => void listeners[e].add(cb),
    off: (e, cb) => void listeners[e].delete(cb),
    lastError: () => decisionError ?? current?.lastError(),
    start: async () => {
      stopped = false;
      await decide();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(recheck);
      recheck = undefined;
      const views = [current, next].filter((v) => v !== undefined);
      next = undefined;
      await Promise.all(views.map((v) => v.stop()));
    },
  };
}
