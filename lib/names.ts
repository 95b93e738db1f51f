/** A Kubernetes API version: v1, v1beta1, v2alpha1 ... (major, stage, stage number). */
export const API_VERSION = /^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$/;

/** Kubernetes and Crossplane naming rules, in one place. */
export const Names = {
  /** Whether `v` is a Kubernetes API version (API_VERSION). */
  isApiVersion(v: string): boolean {
    return API_VERSION.test(v);
  },

  /** RFC 1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63 characters. */
  isDnsLabel(s: string): boolean {
    return s.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s);
  },

  /** RFC 1123 subdomain: dot-separated labels, at most 253 characters. */
  isDnsSubdomain(s: string): boolean {
    return s.length <= 253 && s.split('.').every((l) => Names.isDnsLabel(l));
  },

  /**
   * The name Crossplane gives a package it installs from a reference: the repository path without registry and tag,
   * reduced to a DNS label (internal/xpkg ToDNSLabel): `xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.2.1`
   * → `crossplane-contrib-function-auto-ready`. Compositions must use this as `functionRef.name`.
   */
  packageName(ref: string): string {
    const noDigest = ref.split('@')[0] ?? ref;
    const slash = noDigest.indexOf('/');
    // A first path segment with a dot or colon (or "localhost") is a registry host.
    const first = slash > 0 ? noDigest.slice(0, slash) : '';
    const withoutRegistry = first.includes('.') || first.includes(':') || first === 'localhost' ? noDigest.slice(slash + 1) : noDigest;
    const lastColon = withoutRegistry.lastIndexOf(':');
    const repo = lastColon > withoutRegistry.lastIndexOf('/') ? withoutRegistry.slice(0, lastColon) : withoutRegistry;
    return toDnsLabel(repo);
  },

  /**
   * The resource name (plural) of one of our kinds that names none, by the English rule where it is one:
   * `PostgresqlInstance` → `postgresqlinstances`, `Policy` → `policies`, `Gateway` → `gateways`, `Mailbox` →
   * `mailboxes`. Undefined for a kind ending in `s` (`Postgres`, `Endpoints`, `Status`: no rule says whether it is
   * already plural), which must name its plural. The one default for every CRD we write (lib/crd-manifest.ts) and
   * every API (apis/api.ts); a kind someone else defines has its plural read from its CRD (synth/resource-names.ts).
   */
  plural(kind: string): string | undefined {
    const k = kind.toLowerCase();
    if (k.endsWith('s')) return undefined;
    if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
    if (/(x|z|ch|sh)$/.test(k)) return `${k}es`;
    return `${k}s`;
  },
};

/** Crossplane's xpkg.ToDNSLabel: keeps [a-z0-9], turns '.', '/', ':', '-' into '-', cuts at 63, trims '-'. */
function toDnsLabel(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out += c;
    if ((c === '.' || c === '/' || c === ':' || c === '-') && i !== 0 && i !== 62 && i !== s.length - 1) out += '-';
    if (i === 62) break;
  }
  return out.replace(/^-+|-+$/g, '');
}
