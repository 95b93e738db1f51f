/**
 * `Api`: one data-service API as synth sees it — its kinds, its spec schema and CEL rules, a composition recipe per
 * backend, example claims and what its export template claims. Instance services are written with the higher-level
 * `DataService` (dataservice.ts), which produces an `Api`; ServiceBinding, Backup and Restore are written as `Api`s.
 */
import type { Backend, Recipe } from '../recipe';
import { celString } from '../lib/cel';
import type { PrinterColumn } from '../lib/crd-manifest';
import { Names } from '../lib/names';
import { s, type Schema, type ValidationRule } from '../lib/schema';
import type { VersionConversion } from '../lib/conversion';
import { conversionsOf, versionRank, type ApiVersion, type PreviousVersion } from './versions';

const DEFAULT_GROUP = 'anynines.com';
const DEFAULT_VERSION = 'v1';

/** Which Crossplane API shape synth writes. */
export type CrossplaneTarget = 'v1' | 'v2';

/** What a CEL rule needs to know about the XRD it lands in. */
export interface RuleContext {
  readonly target: CrossplaneTarget;
  /**
   * A CEL expression (evaluated on `spec`) naming the composition that composes this resource: the one the resource
   * references, else the default. Guarded with `has()`, so `defaultCompositionRef` keeps working (Klutch's rules
   * read `self.compositionRef.name` unguarded, which fails on every claim that relies on the default).
   */
  readonly composition: string;
  /** The composition name of a backend (`a8s-postgresql`). */
  compositionName(backend: Backend): string;
  /** A CEL expression: the resource is composed by the backend's composition (`(<composition> == 'a8s-backup')`). */
  composedBy(backend: Backend): string;
}

/** A resource (other than the claim's own secret) that the bind backend syncs to the app cluster with the claim. */
export interface ApiPermissionClaim {
  readonly group: string;
  readonly resource: string;
  readonly version: string;
  /** Which side creates the objects: `Provider` for credentials the control plane writes. */
  readonly owner: 'Provider' | 'Consumer';
}

export type { PrinterColumn };

export interface ApiProps {
  /** Short name, a DNS label: compositions are `<backend>-<name>`. */
  readonly name: string;
  /** The claim kind (`PostgresqlInstance`); the composite kind is `X<kind>` (v1 target) or the kind itself (v2). */
  readonly kind: string;
  /** @default the kind's English plural, lower-cased (Names.plural); required for a kind ending in `s` */
  readonly plural?: string;
  /** @default anynines.com */
  readonly group?: string;
  /** The newest version: the one etcd stores and the recipes read. @default v1 */
  readonly version?: string;
  /**
   * Older versions still served, oldest first, each with its conversion to the next (issue 36): claims written in
   * them keep working while app teams move. Changing a field in place is a break the guard refuses (synth --against).
   * @default none
   */
  readonly previousVersions?: readonly PreviousVersion[];
  readonly description?: string;
  /** Schema of `spec` (an object schema). */
  readonly spec: Schema;
  /** Spec-level CEL rules that depend on the target (they read the composition reference). */
  readonly rules?: (ctx: RuleContext) => readonly ValidationRule[];
  /** Schema of `status`. @default `{ managed: <free-form> }` */
  readonly status?: Schema;
  /** The backend whose composition serves resources that name none. */
  readonly defaultBackend: Backend;
  /**
   * How each backend composes the resource, by backend name (a DNS label; compositions are `<backend>-<name>`), in
   * the order the compositions are written. Recipes come from the backend modules (backends/).
   */
  readonly backends: Readonly<Record<Backend, Recipe>>;
  /** Example claim `spec` per backend: written to `examples/` and validated by the tests. */
  readonly examples: Partial<Record<Backend, Record<string, unknown>>>;
  readonly printerColumns?: readonly PrinterColumn[];
  /** @default Background (Crossplane's default) */
  readonly defaultCompositeDeletePolicy?: 'Background' | 'Foreground';
  /** Resources synced along with the claim by the bind backend. */
  readonly permissionClaims?: readonly ApiPermissionClaim[];
}

/** <0, 0, >0 as Kubernetes orders API versions `a` and `b`. */
function compareRank(a: string, b: string): number {
  const [x, y] = [versionRank(a), versionRank(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** An error in a definition: names the API, the field and the fix. */
export class DefinitionError extends Error {
  constructor(api: string, field: string, problem: string, fix: string) {
    super(`data service "${api}": ${field}: ${problem}; ${fix}`);
    this.name = 'DefinitionError';
  }
}

export class Api {
  readonly name: string;
  readonly kind: string;
  readonly plural: string;
  readonly group: string;
  readonly version: string;
  readonly description: string;
  readonly spec: Schema;
  readonly status: Schema;
  readonly defaultBackend: Backend;
  readonly backends: Readonly<Record<Backend, Recipe>>;
  readonly examples: Partial<Record<Backend, Record<string, unknown>>>;
  readonly printerColumns: readonly PrinterColumn[];
  readonly defaultCompositeDeletePolicy: 'Background' | 'Foreground';
  readonly permissionClaims: readonly ApiPermissionClaim[];
  /** Every served version, oldest first; the last is `version`, the storage version. */
  readonly versions: readonly ApiVersion[];
  /** The conversion between each two neighbours of `versions`, oldest first (empty for one version). */
  readonly conversions: readonly VersionConversion[];

  constructor(props: ApiProps) {
    const fail = (field: string, problem: string, fix: string): never => {
      throw new DefinitionError(props.name, field, problem, fix);
    };
    if (!Names.isDnsLabel(props.name)) {
      fail('name', `"${props.name}" is not a DNS label`, 'use lower-case letters, digits and "-", at most 63 characters');
    }
    if (!/^[A-Z][A-Za-z0-9]{0,62}$/.test(props.kind)) {
      fail(
        'kind',
        `"${props.kind}" is not a Kubernetes kind`,
        'use an UpperCamelCase name of letters and digits, e.g. "PostgresqlInstance"',
      );
    }
    const plural =
      props.plural ??
      Names.plural(props.kind) ??
      fail(
        'plural',
        `kind "${props.kind}" ends in "s", so its plural cannot be derived`,
        `set plural, the resource name in URLs and RBAC (e.g. "${props.kind.toLowerCase()}es" or "${props.kind.toLowerCase()}")`,
      );
    if (!Names.isDnsLabel(plural)) fail('plural', `"${plural}" is not a DNS label`, 'use lower-case letters and digits');
    const group = props.group ?? DEFAULT_GROUP;
    if (!Names.isDnsSubdomain(group) || !group.includes('.')) {
      fail('group', `"${group}" is not an API group`, 'use a DNS subdomain with at least one dot, e.g. "anynines.com"');
    }
    const version = props.version ?? DEFAULT_VERSION;
    if (!Names.isApiVersion(version)) {
      fail('version', `"${version}" is not a Kubernetes API version`, 'use v1, v1beta1, v2alpha1, ...');
    }
    if (props.spec.type !== 'object') fail('spec', 'is not an object schema', 'build it with s.object({...})');
    const previous = props.previousVersions ?? [];
    previous.forEach((p, i) => {
      const next = previous[i + 1]?.name ?? version;
      if (!Names.isApiVersion(p.name))
        fail(`previousVersions[${i}].name`, `"${p.name}" is not a Kubernetes API version`, 'use v1, v1beta1, v2alpha1, ...');
      if (compareRank(p.name, next) >= 0)
        fail(
          `previousVersions[${i}].name`,
          `"${p.name}" is not older than "${next}"`,
          "list older versions oldest first, each older than the API's version",
        );
      if (p.spec.type !== 'object') fail(`previousVersions[${i}].spec`, 'is not an object schema', 'build it with s.object({...})');
    });
    const backends = Object.keys(props.backends);
    if (backends.length === 0) fail('backends', 'no backend is defined', 'add a recipe for a backend, e.g. a9s or a8s');
    for (const b of backends) {
      if (!Names.isDnsLabel(b)) fail(`backends.${b}`, 'is not a backend name', 'name backends with a DNS label, e.g. "a9s"');
    }
    if (!props.backends[props.defaultBackend]) {
      fail('defaultBackend', `"${props.defaultBackend}" has no recipe`, `choose one of ${backends.join(', ')} or add its recipe`);
    }
    for (const b of backends) {
      if (!props.examples[b]) fail(`examples.${b}`, 'is missing', `add an example claim spec for the ${b} backend`);
    }
    for (const b of Object.keys(props.examples)) {
      if (!props.backends[b]) fail(`examples.${b}`, 'names a backend without a recipe', `use one of ${backends.join(', ')}`);
    }

    this.name = props.name;
    this.kind = props.kind;
    this.plural = plural;
    this.group = group;
    this.version = version;
    this.description = props.description ?? `A ${props.kind} of the ${props.name} data service.`;
    this.spec = props.spec;
    this.status = props.status ?? s.object({ managed: s.freeform({ description: 'Observed state of the backend resource.' }) });
    this.defaultBackend = props.defaultBackend;
    this.backends = props.backends;
    this.examples = props.examples;
    this.printerColumns = props.printerColumns ?? [];
    this.defaultCompositeDeletePolicy = props.defaultCompositeDeletePolicy ?? 'Background';
    this.permissionClaims = props.permissionClaims ?? [];
    const newest: ApiVersion = { name: version, spec: this.spec, status: this.status, rules: props.rules ?? (() => []), storage: true };
    this.versions = [
      ...previous.map((p) => ({
        name: p.name,
        spec: p.spec,
        status: p.status ?? this.status,
        rules: p.rules ?? (() => []),
        deprecated: p.deprecated,
        storage: false,
      })),
      newest,
    ];
    this.conversions = conversionsOf(this.versions, previous, fail);
  }

  /** The backends this API can be composed on, in a stable order. */
  get backendNames(): Backend[] {
    return Object.keys(this.backends);
  }

  /** `a8s-postgresql`. */
  compositionName(backend: Backend): string {
    return `${backend}-${this.name}`;
  }

  /**
   * The one Composition of the API on the v2 target (`postgresql`): it composes on the backend whose composition the
   * composite names in `spec.compositionRef.name`, Klutch's field (compositions/selection.ts).
   */
  get selectionCompositionName(): string {
    return this.name;
  }

  /** The composite kind for a target: `XPostgresqlInstance` with claims (v1), `PostgresqlInstance` without (v2). */
  compositeKind(target: CrossplaneTarget): string {
    return target === 'v1' ? `X${this.kind}` : this.kind;
  }

  compositePlural(target: CrossplaneTarget): string {
    return target === 'v1' ? `x${this.plural}` : this.plural;
  }

  get apiVersion(): string {
    return `${this.group}/${this.version}`;
  }

  /**
   * Spec-level CEL rules for a target. Both targets read Klutch's `spec.compositionRef`: on v1 it is Crossplane's
   * claim field, on v2 a field of the API that the selection Composition reads. On v2 a claim written for Klutch on
   * Crossplane v2 names its backend in Crossplane's own `spec.crossplane.compositionRef` instead (its v2-branch XRDs):
   * that wins where it names any Composition but the selection one (which Crossplane writes there on a 1.x claim) —
   * one the API has no recipe for too, so that the rule refusing such a backend refuses it in either field.
   */
  rules(target: CrossplaneTarget, version: string = this.version): readonly ValidationRule[] {
    const v = this.versions.find((x) => x.name === version);
    if (!v) throw new Error(`data service "${this.name}" has no version ${version}; it has ${this.versions.map((x) => x.name).join(', ')}`);
    const klutch1 = `(has(self.compositionRef) ? self.compositionRef.name : ${celString(this.compositionName(this.defaultBackend))})`;
    const namesNone = `['', ${celString(this.selectionCompositionName)}]`;
    const namedByCrossplane = `(has(self.crossplane) && has(self.crossplane.compositionRef) && !(self.crossplane.compositionRef.name in ${namesNone}))`;
    const composition = target === 'v1' ? klutch1 : `(${namedByCrossplane} ? self.crossplane.compositionRef.name : ${klutch1})`;
    const own = v.rules({
      target,
      composition,
      compositionName: (b) => this.compositionName(b),
      composedBy: (b) => `(${composition} == ${celString(this.compositionName(b))})`,
    });
    if (target === 'v1') return own;
    return [
      {
        rule: `!(${namedByCrossplane} && has(self.compositionRef) && self.compositionRef.name != self.crossplane.compositionRef.name)`,
        message:
          'spec.compositionRef.name and spec.crossplane.compositionRef.name name different backends: name it once, in spec.compositionRef (Klutch 1.x) or spec.crossplane.compositionRef (Klutch on Crossplane v2), or the same in both',
      },
      ...own,
    ];
  }
}
