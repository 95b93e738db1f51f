/** Whatever arrives — random, truncated or mangled requests — the function answers, and never throws. */
import { RunFunctionRequest, Severity } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { runFunction } from './fn';
import { allParameters, compositeOf, inputOf, requestOf } from '../../harness/crossplane/function-requests';

const apis: Api[] = await loadCatalog();

/** A small deterministic PRNG, so a failure reproduces from its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomValue(r: () => number, depth = 0): unknown {
  const k = Math.floor(r() * (depth > 3 ? 6 : 8));
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return Math.floor(r() * 1e6) - 5e5;
    case 3:
      return ['', 'spec', 'a.b[c', '[0]', 'a9s-postgresql13', '%s', '__proto__', 'status.x'][Math.floor(r() * 8)];
    case 4:
      return undefined;
    case 5:
      return r() * 1e9;
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default: {
      const keys = [
        'apiVersion',
        'kind',
        'spec',
        'metadata',
        'parameters',
        'fields',
        'from',
        'to',
        'value',
        'transforms',
        'type',
        'status',
        'plan',
        'service',
        'backend',
        'resource',
        'providerConfig',
        'planTable',
        'plans',
        'labels',
      ];
      return Object.fromEntries(
        Array.from({ length: Math.floor(r() * 5) }, () => [keys[Math.floor(r() * keys.length)], randomValue(r, depth + 1)]),
      );
    }
  }
}

/** Replaces one random node of a JSON tree with a random value. */
function mutate(r: () => number, v: unknown): unknown {
  if (typeof v !== 'object' || v === null || r() < 0.15) return randomValue(r);
  const c: any = Array.isArray(v) ? [...v] : { ...v };
  const keys = Object.keys(c);
  if (keys.length === 0) return randomValue(r);
  const k = keys[Math.floor(r() * keys.length)] as string;
  c[k] = mutate(r, c[k]);
  return c;
}

/** The tag Crossplane expects back: the request's `meta.tag`, or empty when the request has none that is a string. */
function tagOf(req: unknown): string {
  const meta = (req as { meta?: unknown } | null)?.meta;
  const tag = typeof meta === 'object' && meta !== null ? (meta as { tag?: unknown }).tag : undefined;
  return typeof tag === 'string' ? tag : '';
}

const seeds = Array.from({ length: 300 }, (_, i) => i + 1);

describe('fuzz', () => {
  it.each(seeds)('seed %i: a mangled request gets a response with the tag', (seed) => {
    const r = rng(seed);
    const api = apis[seed % apis.length] as Api;
    const b = api.backendNames[seed % api.backendNames.length] as 'a9s';
    const spec = { ...(api.examples[b] as object), parameters: allParameters(api) };
    const req = requestOf(inputOf(api, b), compositeOf(api, b, spec));
    const json = RunFunctionRequest.toJSON(req) as Record<string, unknown>;
    const mangled = mutate(r, mutate(r, json)) as Record<string, unknown>;
    let decoded: RunFunctionRequest;
    try {
      decoded = RunFunctionRequest.fromJSON(mangled);
    } catch {
      decoded = mangled as unknown as RunFunctionRequest;
    }
    const rsp = runFunction(decoded);
    expect(rsp.meta?.tag, 'the response carries the request tag').toBe(tagOf(decoded));
    expect(rsp.meta?.ttl).toBeDefined();
    expect(Array.isArray(rsp.results)).toBe(true);
    for (const x of rsp.results) if (x.severity === Severity.SEVERITY_FATAL) expect(x.message).toMatch(/^cannot /);
  });

  it.each(seeds.slice(0, 100))('seed %i: truncated wire bytes decode or fail before the function; what decodes gets a response', (seed) => {
    const r = rng(seed);
    const api = apis[seed % apis.length] as Api;
    const b = api.backendNames[0] as 'a9s';
    const bytes = RunFunctionRequest.encode(
      requestOf(inputOf(api, b), compositeOf(api, b, api.examples[b] as Record<string, unknown>)),
    ).finish();
    const cut = bytes.slice(0, Math.floor(r() * bytes.length));
    let req: RunFunctionRequest | undefined;
    try {
      req = RunFunctionRequest.decode(cut);
    } catch {
      return; // grpc-js answers a request it cannot decode with an error status before the handler runs.
    }
    const rsp = runFunction(req);
    expect(rsp.meta?.tag, 'the response carries the request tag').toBe(tagOf(req));
  });

  it.each([undefined, null, {}, 42, 'x', [], { meta: null, observed: 'x', desired: 7, input: [] }])(
    'raw %j gets a Fatal response',
    (raw) => {
      const rsp = runFunction(raw as unknown as RunFunctionRequest);
      expect(rsp.results.some((x) => x.severity === Severity.SEVERITY_FATAL)).toBe(true);
    },
  );
});
