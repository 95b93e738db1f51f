/**
 * Who may bind what: the one check every way of binding calls (the browser's /bind and /resources, the export-request
 * controller, and later the machine bind and AppClusterBinding). The rule lives in annotations on the operator's
 * APIServiceExportTemplate, so Klutch's CRD stays as it is (docs/decisions/bind-authorization.md):
 *
 *   klutch-kit.anynines.com/bind-allowed-groups:   "dba, platform"        OIDC groups (the --oidc-groups-claim)
 *   klutch-kit.anynines.com/bind-allowed-subjects: "alice"                 OIDC subjects (`sub`)
 *   klutch-kit.anynines.com/bind-allowed-clients:  "ci-pipeline"           OIDC client IDs of machine identities
 *
 * Each value is a comma-separated list, or a JSON array of strings (for names with commas, such as LDAP DNs); `*`
 * matches every logged-in identity. An identity matching any entry of any of them may bind; a template with none of
 * them follows the operator's --default-bind-policy. A value that cannot be read refuses everyone (fail closed).
 */
import type { APIServiceExportTemplate } from '../../exports/bind-api';

const P = 'klutch-kit.anynines.com';
export const BindAnnotations = {
  allowedGroups: `${P}/bind-allowed-groups`,
  allowedSubjects: `${P}/bind-allowed-subjects`,
  allowedClients: `${P}/bind-allowed-clients`,
} as const;

/** What applies to a template without a rule: `allow-all` is Klutch's behaviour, `deny-all` secure by default. */
export type DefaultBindPolicy = 'allow-all' | 'deny-all';
export const DEFAULT_BIND_POLICIES: readonly DefaultBindPolicy[] = ['allow-all', 'deny-all'];

/** Who is binding, from a verified token (or, on the request path, what the last verified bind recorded). */
export interface BindIdentity {
  readonly subject?: string;
  readonly groups: readonly string[];
  /** Set for a machine identity (client-credentials): its OIDC client ID. */
  readonly clientId?: string;
}

export interface BindRule {
  readonly groups: readonly string[];
  readonly subjects: readonly string[];
  readonly clients: readonly string[];
}

/** Why a bind was refused: the `reason` label of klutch_backend_bind_refusals_total. */
export type RefusalReason = 'not-allowed' | 'default-deny' | 'invalid-rule';

export type BindDecision =
  | { readonly allowed: true; /** What allowed it: `group:<g>`, `subject:<s>`, `client:<c>`, `default`. */ readonly by: string }
  | {
      readonly allowed: false;
      readonly reason: RefusalReason;
      /** Names the API, what is missing and the fix. */ readonly message: string;
    };

/** `resource.group` of a template: the API's name in pages, logs and the metric. */
export function apiName(template: APIServiceExportTemplate): string {
  const { resource, group = '' } = template.spec.APIServiceSelector;
  return `${resource}.${group}`;
}

/** The template's rule; undefined when it has none; an Error naming the annotation when one is unreadable. */
export function bindRule(template: APIServiceExportTemplate): BindRule | undefined | Error {
  const a = template.metadata.annotations ?? {};
  if (!Object.values(BindAnnotations).some((k) => k in a)) return undefined;
  try {
    return {
      groups: list(BindAnnotations.allowedGroups, a[BindAnnotations.allowedGroups]),
      subjects: list(BindAnnotations.allowedSubjects, a[BindAnnotations.allowedSubjects]),
      clients: list(BindAnnotations.allowedClients, a[BindAnnotations.allowedClients]),
    };
  } catch (e) {
    return e as Error;
  }
}

function list(key: string, v: string | undefined): string[] {
  if (v === undefined) return [];
  const t = v.trim();
  if (t.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(t);
    } catch (e) {
      throw new Error(`annotation ${key} starts with "[" but is not a JSON array (${(e as Error).message})`, { cause: e });
    }
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string'))
      throw new Error(`annotation ${key} is a JSON value but not an array of strings`);
    return parsed.map((x) => x.trim()).filter(Boolean);
  }
  return t
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** Whether `identity` may bind the API of `template`, given the operator's default for templates without a rule. */
export function mayBind(identity: BindIdentity, template: APIServiceExportTemplate, defaultPolicy: DefaultBindPolicy): BindDecision {
  const api = apiName(template);
  const where = `APIServiceExportTemplate ${template.metadata.namespace}/${template.metadata.name}`;
  const rule = bindRule(template);
  if (rule instanceof Error) {
    return {
      allowed: false,
      reason: 'invalid-rule',
      message: `${api} cannot be bound by anyone until the platform operator fixes its rule: ${where}: ${rule.message}`,
    };
  }
  if (!rule) {
    if (defaultPolicy === 'allow-all') return { allowed: true, by: 'default' };
    return {
      allowed: false,
      reason: 'default-deny',
      message: `${api} names no group allowed to bind it, and this backend allows none by default (--default-bind-policy=deny-all); the platform operator grants it with annotation ${BindAnnotations.allowedGroups} on ${where}`,
    };
  }
  const any = (xs: readonly string[]) => xs.includes('*');
  const group = rule.groups.find((g) => g === '*' || identity.groups.includes(g));
  if (group) return { allowed: true, by: `group:${group}` };
  if (identity.subject !== undefined && (any(rule.subjects) || rule.subjects.includes(identity.subject)))
    return { allowed: true, by: `subject:${identity.subject}` };
  if (identity.clientId !== undefined && (any(rule.clients) || rule.clients.includes(identity.clientId)))
    return { allowed: true, by: `client:${identity.clientId}` };
  const wanted = [
    rule.groups.length ? `a member of ${plural('group', rule.groups)}` : '',
    rule.subjects.length ? `${plural('subject', rule.subjects)}` : '',
    rule.clients.length ? `${plural('client', rule.clients)}` : '',
  ].filter(Boolean);
  const yours = identity.groups.length ? `your groups are ${shown(identity.groups)}` : 'your login carries no groups';
  return {
    allowed: false,
    reason: 'not-allowed',
    message: wanted.length
      ? `only ${wanted.join(' or ')} may bind ${api}; ${yours}. Ask the platform operator for membership, then log in again`
      : `${api} allows nobody to bind it (its rule lists no group, subject or client); ask the platform operator`,
  };
}

function plural(noun: string, xs: readonly string[]): string {
  return `${noun}${xs.length > 1 ? 's' : ''} ${shown(xs)}`;
}

/** At most ten names, quoted: a page stays readable with a user in hundreds of groups. */
function shown(xs: readonly string[]): string {
  const head = xs.slice(0, 10).map((x) => `"${x}"`);
  return xs.length > 10 ? `${head.join(', ')} and ${xs.length - 10} more` : head.join(', ');
}
