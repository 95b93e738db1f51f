/**
 * `DataService`: everything about one data service in one definition — kinds, service versions and plans per
 * backend, parameters with their per-backend keys, and status — from which synth derives the XRD, a Composition per
 * backend, the export template and the example claims. A definition is checked when it is built: a mistake fails
 * at synth time with the service, the field and the fix.
 */
import { a8sInstance, a9sInstance, checkA8sOffering, type BackendA8sOffering } from '../backends';
import { checkCnpgOffering, cnpgInstance, type BackendCnpgOffering } from '../backends/cnpg';
import type { FieldMapping, ParameterMapping, Recipe, Transform } from '../recipe';
import { Api, DefinitionError } from './api';
import { MANAGED_STATE_COLUMN } from './operations';
import { celList, celString, planTransitionRules, type Plan, type Topology } from './plans';
import { s, type Schema, type ValidationRule } from '../lib/schema';

/**
 * An instance's backups in `kubectl get`: whether its WAL archiving works (CloudNativePG's ContinuousArchiving
 * condition: no backup is scheduled until it does, and its message says why not), the last base backup and the start
 * of the recoverable window.
 */
const BACKUP_COLUMNS = [
  { name: 'Archiving', type: 'string', jsonPath: '.status.managed.conditions[?(@.type=="ContinuousArchiving")].status' },
  { name: 'LastBackup', type: 'string', jsonPath: '.status.managed.lastSuccessfulBackup' },
  { name: 'RecoverableFrom', type: 'string', jsonPath: '.status.managed.firstRecoverabilityPoint' },
] as const;

/** The backends a DataService offers itself on (other backends are composed through `Api` recipes). */
export type OwnBackend = 'a9s' | 'a8s' | 'cnpg';
const OWN_BACKENDS: readonly OwnBackend[] = ['a9s', 'a8s', 'cnpg'];

/** The key a backend expects for a parameter: a path below its parameters, optionally lower-casing the value. */
export type ParameterKey = string | { readonly key: string; readonly lowercase?: boolean };

export interface Parameter {
  /** The claim's key below `spec.parameters` (camelCase, as Klutch's). */
  readonly name: string;
  readonly schema: Schema;
  /** The key per backend that offers the parameter. Every offered backend needs one. */
  readonly keys: Partial<Record<OwnBackend, ParameterKey>>;
  /** Backends that offer the parameter. @default every backend of the service */
  readonly backends?: readonly OwnBackend[];
  /** Only plans of these topologies accept the parameter (enforced by CEL). @default any */
  readonly topologies?: readonly Topology[];
}

/** A top-level spec field other than service, plan and parameters (PostgreSQL's `expose`). */
export interface SpecField {
  readonly name: string;
  readonly schema: Schema;
  /** Where the value goes per backend (path in the composed resource). Backends without one ignore the field. */
  readonly to: Partial<Record<OwnBackend, string>>;
  /** What a backend gets when the claim leaves the field out. @default nothing is set */
  readonly defaults?: Partial<Record<OwnBackend, unknown>>;
}

/** `restoreFrom` of a cnpg instance whose offering has an object store (backends/cnpg-backup.ts clusterRecoveryFields). */
const RESTORE_FROM_SCHEMA = s
  .object(
    {
      instance: s.string({
        description:
          "The instance claim in this namespace whose backups to restore from; a deleted one's backups are kept for the retention period.",
        minLength: 1,
        maxLength: 63,
        pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
      }),
      pointInTime: s.string({
        description: "Recover to this moment (RFC 3339, e.g. 2026-12-03T04:00:00Z); default: the end of the source's archived WAL.",
        format: 'date-time',
      }),
    },
    { required: ['instance'], description: 'Make this instance a copy of another instance as of its backups (point-in-time recovery).' },
  )
  .immutable('restoreFrom cannot be changed: create a new instance to restore into');

interface Offering {
  /** Service versions (the `service` enum values) this backend offers. */
  readonly services: readonly string[];
  readonly plans: readonly Plan[];
  /** @default `<service>-service-broker` (a9s), `kubernetes-provider` (a8s) */
  readonly providerConfigName?: string;
}

export type A9sOffering = Offering;

/** The a8s offering: its services and plans, and the a8s object, version prefix, sizes and replicas (backends/a8s.ts). */
export interface A8sOffering extends BackendA8sOffering {
  readonly plans: readonly Plan[];
}

/** The CloudNativePG offering: its services and plans, images, sizes and instances (backends/cnpg.ts). */
export interface CnpgOffering extends BackendCnpgOffering {
  readonly plans: readonly Plan[];
}

export interface DataServiceProps {
  /** Short name, a DNS label: `postgresql` → compositions `a9s-postgresql`, `a8s-postgresql`. */
  readonly name: string;
  /** The claim kind (`PostgresqlInstance`). */
  readonly kind: string;
  /** @default the kind's English plural, lower-cased (Names.plural); required for a kind ending in `s` */
  readonly plural?: string;
  readonly description?: string;
  readonly defaultBackend: OwnBackend;
  /** Plan sizes, smallest first: moving to an earlier size is downsizing, which is refused. */
  readonly sizes: readonly string[];
  readonly a9s?: A9sOffering;
  readonly a8s?: A8sOffering;
  readonly cnpg?: CnpgOffering;
  readonly parameters?: readonly Parameter[];
  readonly fields?: readonly SpecField[];
  /** The plan can never change (Prometheus). @default false */
  readonly planImmutable?: boolean;
  /** Plans never move between single and replica/cluster, in either direction (KeyValue, LogMe2). @default false: only replica/cluster → single is refused */
  readonly fixedTopology?: boolean;
  /** Service versions that only run with ssl plans (MariaDB 10.11). */
  readonly sslOnlyServices?: readonly string[];
  /** Example claim parameters (merged into the generated examples). */
  readonly exampleParameters?: Record<string, unknown>;
}

export class DataService {
  readonly props: DataServiceProps;
  readonly api: Api;

  constructor(props: DataServiceProps) {
    this.props = props;
    this.validate();
    this.api = new Api({
      name: props.name,
      kind: props.kind,
      plural: props.plural,
      description: props.description,
      spec: this.specSchema(),
      rules: (ctx) => this.specRules(ctx.composition, ctx.compositionName),
      defaultBackend: props.defaultBackend,
      backends: {
        ...(props.a9s ? { a9s: this.a9sRecipe(props.a9s) } : {}),
        ...(props.a8s ? { a8s: this.a8sRecipe(props.a8s) } : {}),
        ...(props.cnpg ? { cnpg: this.cnpgRecipe(props.cnpg) } : {}),
      },
      examples: Object.fromEntries(this.backends.map((b) => [b, this.example(b)])),
      // With backups on cnpg, where CloudNativePG puts them in the Cluster's status (status.managed of the claim).
      printerColumns: [MANAGED_STATE_COLUMN, ...(props.cnpg?.backups ? BACKUP_COLUMNS : [])],
      defaultCompositeDeletePolicy: 'Foreground',
    });
  }

  get backends(): OwnBackend[] {
    return OWN_BACKENDS.filter((b) => this.props[b]);
  }

  private offering(b: OwnBackend): Offering {
    const o = this.props[b];
    if (!o) throw new Error(`no ${b} offering`);
    return o;
  }

  private fail(field: string, problem: string, fix: string): never {
    throw new DefinitionError(this.props.name, field, problem, fix);
  }

  private validate(): void {
    const p = this.props;
    if (this.backends.length === 0) this.fail('a9s/a8s', 'no backend offers the service', 'add an a9s or an a8s offering');
    if (!p[p.defaultBackend])
      this.fail('defaultBackend', `"${p.defaultBackend}" offers nothing`, `add its offering or choose ${this.backends.join(' or ')}`);
    if (p.sizes.length === 0) this.fail('sizes', 'is empty', 'list the plan sizes, smallest first');
    if (new Set(p.sizes).size !== p.sizes.length) this.fail('sizes', 'lists a size twice', 'list each size once');
    for (const b of this.backends) {
      const o = this.offering(b);
      if (o.services.length === 0) this.fail(`${b}.services`, 'is empty', 'list the service versions this backend offers');
      if (o.plans.length === 0) this.fail(`${b}.plans`, 'is empty', 'list the plans this backend offers');
      const seen = new Set<string>();
      for (const plan of o.plans) {
        const field = `${b}.plans["${plan.name}"]`;
        if (seen.has(plan.name)) this.fail(field, 'is listed twice', 'list each plan once');
        seen.add(plan.name);
        if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(plan.name))
          this.fail(field, 'is not a valid plan name', 'use lower-case letters, digits, "-" and "."');
        if (!p.sizes.includes(plan.size)) {
          this.fail(
            `${field}.size`,
            `"${plan.size}" is not one of the service's sizes [${p.sizes.join(', ')}]`,
            'add the size to sizes or fix the plan',
          );
        }
        for (const v of plan.services ?? []) {
          if (!o.services.includes(v))
            this.fail(`${field}.services`, `"${v}" is not a ${b} service version`, `use one of ${o.services.join(', ')}`);
        }
      }
    }
    // A plan offered by two backends must mean the same on both, or the transition rules would contradict each other.
    this.backends.forEach((b, i) => {
      for (const q of this.offering(b).plans) {
        for (const earlier of this.backends.slice(0, i)) {
          const twin = this.offering(earlier).plans.find((x) => x.name === q.name);
          if (twin && (twin.size !== q.size || twin.topology !== q.topology || twin.ssl !== q.ssl)) {
            this.fail(
              `${b}.plans["${q.name}"]`,
              `differs from the ${earlier} plan of the same name`,
              'give it the same size, topology and ssl, or another name',
            );
          }
        }
      }
    });
    if (p.a8s) checkA8sOffering(p.a8s, (field, problem, fix) => this.fail(field, problem, fix));
    if (p.cnpg) checkCnpgOffering(p.cnpg, (field, problem, fix) => this.fail(field, problem, fix));
    const allServices = this.allServices();
    for (const v of p.sslOnlyServices ?? []) {
      if (!allServices.includes(v)) this.fail('sslOnlyServices', `"${v}" is not a service version`, `use one of ${allServices.join(', ')}`);
    }
    const names = new Set<string>(['service', 'plan', 'parameters', 'acceptsIncomplete']);
    for (const f of p.fields ?? []) {
      if (names.has(f.name)) this.fail(`fields["${f.name}"]`, 'is defined twice or shadows a built-in field', 'rename it');
      names.add(f.name);
      for (const b of Object.keys(f.to))
        if (!this.props[b as OwnBackend])
          this.fail(`fields["${f.name}"].to.${b}`, 'names a backend the service does not offer', 'remove it');
    }
    const params = new Set<string>();
    for (const q of p.parameters ?? []) {
      const field = `parameters["${q.name}"]`;
      if (!/^[a-zA-Z][a-zA-Z0-9_]*$/.test(q.name)) this.fail(field, 'is not a valid parameter name', 'use a camelCase name');
      if (params.has(q.name)) this.fail(field, 'is defined twice', 'define each parameter once');
      params.add(q.name);
      for (const b of q.backends ?? this.backends) {
        if (!this.props[b])
          this.fail(`${field}.backends`, `names "${b}", which the service does not offer`, `use ${this.backends.join(' or ')}`);
        if (q.keys[b] === undefined) {
          this.fail(
            `${field}.keys.${b}`,
            `is missing, but the ${b} backend offers the parameter`,
            `add the ${b} key, or set backends to the ones that offer it`,
          );
        }
      }
      for (const t of q.topologies ?? []) {
        if (!this.backends.some((b) => this.offering(b).plans.some((x) => x.topology === t))) {
          this.fail(`${field}.topologies`, `"${t}" has no plan`, 'use a topology some plan has');
        }
      }
    }
  }

  private allServices(): string[] {
    return [...new Set(this.backends.flatMap((b) => this.offering(b).services))];
  }

  private allPlans(): Plan[] {
    const out = new Map<string, Plan>();
    for (const b of this.backends) for (const p of this.offering(b).plans) if (!out.has(p.name)) out.set(p.name, p);
    return [...out.values()];
  }

  private specSchema(): Schema {
    const p = this.props;
    const params = Object.fromEntries((p.parameters ?? []).map((q) => [q.name, q.schema]));
    return s.object(
      {
        // No schema default, as in Klutch: the compositions default it to true.
        acceptsIncomplete: s.boolean({ description: 'Let the backend provision asynchronously (default true).' }),
        service: this.serviceSchema(),
        plan: s.string({
          description: 'The service plan: topology, size and ssl.',
          enum: this.allPlans().map((x) => x.name),
          rules: planTransitionRules(this.allPlans(), p.sizes, { immutable: p.planImmutable, fixedTopology: p.fixedTopology }),
        }),
        parameters: s.object(params, { description: 'Configuration of the service instance.' }),
        ...Object.fromEntries((p.fields ?? []).map((f) => [f.name, f.schema])),
        // Read only in the app cluster, by the konnector access file's admission policy (docs/backups.md).
        deletionProtection: s.boolean({
          description: 'Refuse deletion of this instance while true (default false); set it to false to delete the instance.',
        }),
        // A cnpg offering with an object store restores new instances from an instance's backups (cnpg-backups.md).
        ...(p.cnpg?.backups ? { restoreFrom: RESTORE_FROM_SCHEMA } : {}),
      },
      { required: ['service', 'plan'] },
    );
  }

  /** The service enum; immutable once there is more than one version to change to (a rule that can never fail is noise). */
  private serviceSchema(): Schema {
    const services = this.allServices();
    const schema = s.string({ description: 'The service version.', enum: services });
    return services.length > 1 ? schema.immutable('The service cannot be changed: create a new instance instead') : schema;
  }

  /** Rules that read several spec fields or the composition: backend-specific services and plans, plan limits. */
  private specRules(composition: string, compositionName: (b: OwnBackend) => string): ValidationRule[] {
    const rules: ValidationRule[] = [];
    const all = this.allServices();
    const allPlans = this.allPlans().map((x) => x.name);
    for (const b of this.backends) {
      const o = this.offering(b);
      const comp = compositionName(b);
      if (o.services.length < all.length) {
        rules.push({
          rule: `${composition} != ${celString(comp)} || self.service in ${celList(o.services)}`,
          message: `The ${comp} composition offers the services ${o.services.join(', ')}`,
        });
      }
      const plans = o.plans.map((x) => x.name);
      if (plans.length < allPlans.length) {
        rules.push({
          rule: `${composition} != ${celString(comp)} || self.plan in ${celList(plans)}`,
          message: `The ${comp} composition offers the plans ${plans.join(', ')}`,
        });
      }
    }
    // Plans limited to some service versions (PostgreSQL 13's bionic plans), grouped by the versions they allow.
    const limited = new Map<string, string[]>();
    for (const plan of this.allPlans()) {
      if (plan.services) limited.set(plan.services.join(','), [...(limited.get(plan.services.join(',')) ?? []), plan.name]);
    }
    for (const [services, plans] of limited) {
      rules.push({
        rule: `!(self.plan in ${celList(plans)}) || self.service in ${celList(services.split(','))}`,
        message: `The plans ${plans.join(', ')} are only offered with ${services.split(',').join(', ')}`,
      });
    }
    const ssl = this.allPlans()
      .filter((x) => x.ssl)
      .map((x) => x.name);
    for (const v of this.props.sslOnlyServices ?? []) {
      rules.push({
        rule: `self.service != ${celString(v)} || self.plan in ${celList(ssl)}`,
        message: `The service ${v} needs an ssl plan (one ending in "-ssl")`,
      });
    }
    // A parameter only some backends offer is refused with the other backends' compositions.
    for (const q of this.props.parameters ?? []) {
      const offered = (q.backends ?? this.backends).map(compositionName);
      if (offered.length === this.backends.length) continue;
      rules.push({
        rule: `!has(self.parameters) || !has(self.parameters.${q.name}) || ${composition} in ${celList(offered)}`,
        message: `The parameter ${q.name} is only offered by the ${offered.join(', ')} composition`,
      });
    }
    if (this.props.cnpg?.backups) {
      const cnpg = compositionName('cnpg');
      rules.push(
        {
          rule: `!has(self.restoreFrom) || ${composition} == ${celString(cnpg)}`,
          message: `restoreFrom is only offered by the ${cnpg} composition`,
        },
        {
          rule: 'has(self.restoreFrom) == has(oldSelf.restoreFrom)',
          message: 'restoreFrom is set when an instance is made and cannot be added or removed: create a new instance to restore into',
        },
      );
    }
    for (const q of this.props.parameters ?? []) {
      if (!q.topologies) continue;
      const plans = this.allPlans()
        .filter((x) => q.topologies?.includes(x.topology))
        .map((x) => x.name);
      rules.push({
        rule: `!has(self.parameters) || !has(self.parameters.${q.name}) || self.plan in ${celList(plans)}`,
        message: `The parameter ${q.name} is only accepted with ${q.topologies.join(' or ')} plans`,
      });
    }
    return rules;
  }

  private parameterMappings(b: OwnBackend): { parameters: ParameterMapping[]; ignoredParameters: string[] } {
    const parameters: ParameterMapping[] = [];
    const ignoredParameters: string[] = [];
    for (const q of this.props.parameters ?? []) {
      const key = q.keys[b];
      if (!(q.backends ?? this.backends).includes(b) || key === undefined) {
        ignoredParameters.push(q.name);
        continue;
      }
      const k = typeof key === 'string' ? { key } : key;
      const transforms: Transform[] = k.lowercase ? [{ type: 'lowercase' }] : [];
      parameters.push({ from: q.name, to: k.key, ...(transforms.length ? { transforms } : {}) });
    }
    return { parameters, ignoredParameters };
  }

  private extraFields(b: OwnBackend): FieldMapping[] {
    return (this.props.fields ?? []).flatMap((f) =>
      f.to[b]
        ? [{ from: `spec.${f.name}`, to: f.to[b] as string, ...(f.defaults?.[b] !== undefined ? { default: f.defaults[b] } : {}) }]
        : [],
    );
  }

  private a9sRecipe(o: A9sOffering): Recipe {
    return a9sInstance({
      providerConfigName: o.providerConfigName ?? `${this.props.name}-service-broker`,
      ...this.parameterMappings('a9s'),
      extraFields: this.extraFields('a9s'),
    });
  }

  private a8sRecipe(o: A8sOffering): Recipe {
    return a8sInstance({ offering: o, ...this.parameterMappings('a8s'), extraFields: this.extraFields('a8s') });
  }

  private cnpgRecipe(o: CnpgOffering): Recipe {
    return cnpgInstance({ offering: o, ...this.parameterMappings('cnpg') });
  }

  /** An example claim spec for a backend: its first service and plan, and the example parameters it offers. */
  private example(b: OwnBackend): Record<string, unknown> {
    const o = this.offering(b);
    const plan = o.plans.find((x) => !x.services) ?? (o.plans[0] as Plan);
    const service =
      (this.props.sslOnlyServices ?? []).includes(o.services[o.services.length - 1] as string) && !plan.ssl
        ? o.services[0]
        : o.services[o.services.length - 1];
    const offered = new Set(
      (this.props.parameters ?? [])
        .filter((q) => (q.backends ?? this.backends).includes(b) && (!q.topologies || q.topologies.includes(plan.topology)))
        .map((q) => q.name),
    );
    const parameters = Object.fromEntries(Object.entries(this.props.exampleParameters ?? {}).filter(([k]) => offered.has(k)));
    return {
      service,
      plan: plan.name,
      ...(Object.keys(parameters).length ? { parameters } : {}),
    };
  }
}
