/**
 * Our bind CRDs, written from schema code, against the upstream files in schemas/klutch-bind/: names, scope and
 * versions (served, storage, subresources, printer columns, openAPIV3Schema) must be equal, descriptions aside.
 * Every deliberate difference is listed in `deltas` and checked on both sides, so it cannot drift silently.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  apiServiceBindingCrd,
  apiServiceExportCrd,
  apiServiceExportRequestCrd,
  apiServiceExportTemplateCrd,
  apiServiceNamespaceCrd,
  appClusterBindingCrd,
  bindApiCrds,
  clusterBindingCrd,
  Kinds,
} from './index';

type Json = Record<string, unknown>;

const upstreamDir = join(import.meta.dirname, '../../schemas/klutch-bind');
const loadUpstream = (file: string): Json => parse(readFileSync(join(upstreamDir, file), 'utf8')) as Json;

/** Drops `description` annotations, but keeps properties that happen to be named "description". */
function stripDescriptions(node: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => stripDescriptions(n));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => isPropertyMap || k !== 'description')
      .map(([k, v]) => [k, stripDescriptions(v, !isPropertyMap && k === 'properties')]),
  );
}

function at(doc: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], doc);
}

function setAt(doc: unknown, path: readonly (string | number)[], value: unknown): void {
  const parent = at(doc, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = value;
}

interface Delta {
  readonly path: readonly (string | number)[];
  readonly upstream: unknown;
  readonly ours: unknown;
  readonly why: string;
}

const schemaRoot = ['spec', 'versions', 0, 'schema', 'openAPIV3Schema'] as const;

const cases: { kind: string; file: string; crd: () => Json; deltas: readonly Delta[] }[] = [
  {
    kind: Kinds.APIServiceExport,
    file: 'klutch.anynines.com_apiserviceexports.yaml',
    crd: apiServiceExportCrd,
    deltas: [
      {
        path: [...schemaRoot, 'x-kubernetes-validations', 0, 'message'],
        upstream: 'informerScope is immutable',
        ours: 'name must be <plural>.<group> of the exported resource',
        why: 'upstream pairs the name rule with the message of the informerScope rule, a copy-paste slip',
      },
    ],
  },
  {
    kind: Kinds.APIServiceExportRequest,
    file: 'klutch.anynines.com_apiserviceexportrequests.yaml',
    crd: apiServiceExportRequestCrd,
    deltas: [],
  },
  {
    kind: Kinds.APIServiceNamespace,
    file: 'klutch.anynines.com_apiservicenamespaces.yaml',
    crd: apiServiceNamespaceCrd,
    deltas: [],
  },
  {
    kind: Kinds.APIServiceBinding,
    file: 'klutch.anynines.com_apiservicebindings.yaml',
    crd: apiServiceBindingCrd,
    deltas: [
      {
        path: ['spec', 'versions', 0, 'additionalPrinterColumns', 1, 'jsonPath'],
        upstream: String.raw`.metadata.annotations.bind\.klutch.\anynines\.com/resources`,
        ours: String.raw`.metadata.annotations.bind\.klutch\.anynines\.com/resources`,
        why: 'upstream mis-escapes the dots (".\\a"), so the Resources column can never show the annotation',
      },
    ],
  },
  {
    kind: Kinds.ClusterBinding,
    file: 'klutch.anynines.com_clusterbindings.yaml',
    crd: clusterBindingCrd,
    deltas: [],
  },
  {
    kind: Kinds.AppClusterBinding,
    file: 'klutch.anynines.com_appclusterbindings.yaml',
    crd: appClusterBindingCrd,
    deltas: [
      {
        path: [...schemaRoot, 'properties', 'status', 'properties', 'rootNamespace'],
        upstream: undefined,
        ours: { type: 'string' },
        why: 'the root namespace is chosen injectively once (not always klutch-bind-<namespace>-<name>) and kept in status',
      },
    ],
  },
  {
    kind: Kinds.APIServiceExportTemplate,
    file: 'example-backend.klutch.anynines.com_apiserviceexporttemplates.yaml',
    crd: apiServiceExportTemplateCrd,
    deltas: [],
  },
];

describe('bind API CRDs equal upstream (descriptions aside)', () => {
  it.each(cases)('$kind', ({ file, crd, deltas }) => {
    const upstream = stripDescriptions(loadUpstream(file)) as Json;
    const ours = stripDescriptions(crd()) as Json;
    for (const d of deltas) {
      expect(at(upstream, d.path), `upstream value at ${d.path.join('.')} (${d.why})`).toEqual(d.upstream);
      expect(at(ours, d.path), `our value at ${d.path.join('.')} (${d.why})`).toEqual(d.ours);
      setAt(upstream, d.path, d.ours);
    }
    expect(ours.apiVersion).toBe(upstream.apiVersion);
    expect(ours.kind).toBe(upstream.kind);
    // metadata: only the name; upstream's only annotation is controller-gen's version stamp.
    expect(at(ours, ['metadata', 'name'])).toBe(at(upstream, ['metadata', 'name']));
    // spec holds group, names, scope and versions (served, storage, subresources, printer columns, schema).
    expect(ours.spec).toEqual(upstream.spec);
  });

  it('covers every file in schemas/klutch-bind', () => {
    expect(cases.map((c) => c.file).sort()).toEqual(
      readdirSync(upstreamDir)
        .filter((f) => f.endsWith('.yaml'))
        .sort(),
    );
  });
});

describe('bindApiCrds', () => {
  it('lists one CRD per kind, in the order of Kinds', () => {
    const kinds = bindApiCrds().map((crd) => at(crd, ['spec', 'names', 'kind']));
    expect(kinds).toEqual(Object.values(Kinds));
  });

  it('returns fresh objects, so callers may mutate them', () => {
    const first = bindApiCrds();
    (first[0] as { metadata: { name: string } }).metadata.name = 'changed';
    expect(at(bindApiCrds()[0], ['metadata', 'name'])).toBe('apiserviceexports.klutch.anynines.com');
  });
});

describe('APIServiceExportTemplate CRD', () => {
  it('keys the selector as the capitalised APIServiceSelector, and requires it', () => {
    const spec = at(apiServiceExportTemplateCrd(), [...schemaRoot, 'properties', 'spec']) as { properties: Json; required: string[] };
    expect(Object.keys(spec.properties)).toContain('APIServiceSelector');
    expect(Object.keys(spec.properties)).not.toContain('apiServiceSelector');
    expect(spec.required).toEqual(['APIServiceSelector']);
  });
});
