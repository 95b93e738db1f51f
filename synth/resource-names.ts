/**
 * RBAC resource names (the plural a rule lists) of the kinds a Role grants: read from the CRD the kind comes from, or
 * for Kubernetes' own kinds from their table, never guessed from the kind (`Policy` is `policies`, `Endpoints` is
 * `endpoints`). A kind with neither is an error that names it and where its CRD goes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface KindRef {
  readonly apiVersion: string;
  readonly kind: string;
}

/** What a CRD says of its kind's names. */
export interface CrdNames {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
}

/** The resource names of the built-in kinds a recipe may wrap or read, by `group/Kind` (core: `/Kind`). */
const BUILT_IN: Readonly<Record<string, string>> = {
  '/ConfigMap': 'configmaps',
  '/Endpoints': 'endpoints',
  '/PersistentVolumeClaim': 'persistentvolumeclaims',
  '/Pod': 'pods',
  '/ResourceQuota': 'resourcequotas',
  '/Secret': 'secrets',
  '/Service': 'services',
  '/ServiceAccount': 'serviceaccounts',
  'apps/Deployment': 'deployments',
  'apps/StatefulSet': 'statefulsets',
  'batch/Job': 'jobs',
  'networking.k8s.io/Ingress': 'ingresses',
  'networking.k8s.io/NetworkPolicy': 'networkpolicies',
  'policy/PodDisruptionBudget': 'poddisruptionbudgets',
};

export const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/**
 * The names of every CustomResourceDefinition in the YAML files below `dir`. `parse` reads a CRD's head (synth's
 * command line passes a memo of yaml's, synth/yaml-memo.ts).
 */
export function crdNamesIn(dir: string, parse: (text: string) => unknown = parseYaml): CrdNames[] {
  const out: CrdNames[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...crdNamesIn(path, parse));
    else if (/\.ya?ml$/.test(name))
      for (const doc of readFileSync(path, 'utf8').split(/^---$/m)) {
        if (!/^kind: CustomResourceDefinition\s*$/m.test(doc)) continue;
        // The names come before the versions, whose schemas are nearly all of a CRD's text: parse only that head
        // (the whole document when a CRD orders its keys otherwise).
        const head = doc.split(/^ {2}versions:/m)[0]!;
        const names = namesOf(head, parse) ?? namesOf(doc, parse);
        if (names) out.push(names);
      }
  }
  return out;
}

function namesOf(text: string, parse: (text: string) => unknown): CrdNames | undefined {
  const o = parse(text) as { spec?: { group?: string; names?: { kind?: string; plural?: string } } } | null;
  const { group, names } = o?.spec ?? {};
  return group && names?.kind && names.plural ? { group, kind: names.kind, plural: names.plural } : undefined;
}

/**
 * The resource name of each kind, from `crds()` (read only when a kind is not built in) or the built-in table.
 * `where` names what asks, for the error.
 */
export function resourceNames(crds: () => readonly CrdNames[], where: string): (k: KindRef) => string {
  let byKind: Map<string, string> | undefined;
  return (k) => {
    const key = `${groupOf(k.apiVersion)}/${k.kind}`;
    const builtIn = BUILT_IN[key];
    if (builtIn) return builtIn;
    byKind ??= new Map(crds().map((c) => [`${c.group}/${c.kind}`, c.plural]));
    const plural = byKind.get(key);
    if (!plural)
      throw new Error(
        `${where}: no CustomResourceDefinition of kind ${k.kind} in group "${groupOf(k.apiVersion)}" (apiVersion ${k.apiVersion}) to read its resource name from: add its CRD file under schemas/ (see schemas/README.md)`,
      );
    return plural;
  };
}
