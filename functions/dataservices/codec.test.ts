/**
 * The function's codec against the SDK's generated one: every request decodes to the object the SDK's decoder gives,
 * and every response encodes to bytes the SDK's decoder (and so Crossplane's) reads back as the response.
 */
import { Ready, RunFunctionRequest, RunFunctionResponse, Severity, Status, Target } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { allParameters, compositeOf, inputOf, requestOf } from '../../harness/crossplane/function-requests';
import { decodeRequest, encodeResponse } from './codec';
import { runFunction } from './fn';

const apis: Api[] = await loadCatalog();

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

const STRINGS = ['', 'spec', 'a.b[c]', 'ünïcödé ✓', '日本語', '😀 emoji', 'x'.repeat(200), '__proto__', '\u0000nul'];
const NUMBERS = [0, -0, 1, -1, 0.5, 1e300, -1e-300, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, NaN, Infinity, -Infinity];

/** A JSON-ish tree as a composite, input or context could hold (undefined and empty containers included). */
function tree(r: () => number, depth = 0): unknown {
  switch (Math.floor(r() * (depth > 4 ? 5 : 8))) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return NUMBERS[Math.floor(r() * NUMBERS.length)];
    case 3:
      return STRINGS[Math.floor(r() * STRINGS.length)];
    case 4:
      return undefined;
    case 5:
      return Array.from({ length: Math.floor(r() * 4) }, () => tree(r, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(r() * 6) }, () => [STRINGS[Math.floor(r() * STRINGS.length)], tree(r, depth + 1)]),
      );
  }
}

function objectTree(r: () => number): Record<string, unknown> {
  const t = tree(r, 1);
  return typeof t === 'object' && t !== null && !Array.isArray(t) ? (t as Record<string, unknown>) : { value: t };
}

/** Requests of every API and backend of the catalog, and random ones using every field of the message. */
function requests(): { name: string; req: RunFunctionRequest }[] {
  const out: { name: string; req: RunFunctionRequest }[] = [];
  for (const api of apis)
    for (const b of api.backendNames) {
      const spec = { ...(api.examples[b] as object), parameters: allParameters(api) };
      out.push({ name: `${api.name} ${b}`, req: requestOf(inputOf(api, b), compositeOf(api, b, spec)) });
      // What Crossplane sends once the composed resource exists: its observed state and the desired state so far.
      const first = runFunction(requestOf(inputOf(api, b), compositeOf(api, b, spec)));
      const observed = Object.fromEntries(Object.entries(first.desired?.resources ?? {}).map(([k, v]) => [k, v.resource ?? {}]));
      out.push({ name: `${api.name} ${b} observed`, req: requestOf(inputOf(api, b), compositeOf(api, b, spec), observed, first.desired) });
    }
  for (let seed = 1; seed <= 60; seed++) {
    const r = rng(seed);
    out.push({
      name: `random ${seed}`,
      req: RunFunctionRequest.fromPartial({
        meta: { tag: STRINGS[seed % STRINGS.length], capabilities: [1, 2] },
        observed: {
          composite: { resource: objectTree(r), connectionDetails: { password: Buffer.from('s3cr3t'), empty: Buffer.alloc(0) }, ready: 1 },
          resources: {
            a: { resource: objectTree(r), connectionDetails: {}, ready: Ready.READY_TRUE },
            '': { resource: {}, connectionDetails: {}, ready: 0 },
          },
        },
        desired: {
          composite: { resource: objectTree(r), connectionDetails: {}, ready: 2 },
          resources: { b: { resource: objectTree(r), connectionDetails: {}, ready: 0 } },
        },
        input: objectTree(r),
        context: seed % 3 ? objectTree(r) : undefined,
        extraResources: { x: { items: [{ resource: objectTree(r), connectionDetails: {}, ready: 0 }] } },
        credentials: { c: { credentialData: { data: { k: Buffer.from('v') } } } },
        requiredResources: { y: { items: [{ resource: objectTree(r), connectionDetails: {}, ready: 0 }] } },
        requiredSchemas: { s: { openapiV3: objectTree(r) } },
      }),
    });
  }
  return out;
}

describe('decodeRequest', () => {
  it.each(requests())('$name decodes as with the SDK', ({ req }) => {
    const bytes = Buffer.from(RunFunctionRequest.encode(req).finish());
    expect(decodeRequest(bytes)).toStrictEqual(RunFunctionRequest.decode(bytes));
  });

  it('fails where the SDK fails on truncated bytes, and decodes the same where it does not', () => {
    const api = apis[0] as Api;
    const b = api.backendNames[0] as 'a9s';
    const bytes = Buffer.from(
      RunFunctionRequest.encode(requestOf(inputOf(api, b), compositeOf(api, b, api.examples[b] as Record<string, unknown>))).finish(),
    );
    let failed = 0;
    for (let cut = 0; cut < bytes.length; cut += 7) {
      const part = bytes.subarray(0, cut);
      let want: RunFunctionRequest | undefined;
      try {
        want = RunFunctionRequest.decode(part);
      } catch {
        failed++;
        expect(() => decodeRequest(part), `cut at ${cut}`).toThrow();
        continue;
      }
      expect(decodeRequest(part), `cut at ${cut}`).toStrictEqual(want);
    }
    expect(failed, 'some cuts fall inside a field').toBeGreaterThan(0);
  });

  it('reads mangled and random bytes as the SDK does: the same object, or an error where it errs', () => {
    const api = apis[1] as Api;
    const b = api.backendNames[0] as 'a9s';
    const good = Buffer.from(RunFunctionRequest.encode(requests()[3]!.req).finish());
    const r = rng(42);
    let same = 0;
    let refused = 0;
    for (let i = 0; i < 600; i++) {
      const bytes =
        i % 3 === 0 ? Buffer.from(Array.from({ length: Math.floor(r() * 300) }, () => Math.floor(r() * 256))) : Buffer.from(good);
      if (i % 3 !== 0) for (let k = 0; k < 1 + (i % 4); k++) bytes[Math.floor(r() * bytes.length)] = Math.floor(r() * 256);
      let want: RunFunctionRequest | undefined;
      try {
        want = RunFunctionRequest.decode(bytes);
      } catch {
        refused++;
        expect(() => decodeRequest(bytes), `case ${i}`).toThrow();
        continue;
      }
      expect(decodeRequest(bytes), `case ${i}`).toStrictEqual(want);
      same++;
    }
    expect(same, 'some mangled requests still decode').toBeGreaterThan(50);
    expect(refused, 'some are refused').toBeGreaterThan(50);
    void b;
  });

  it('refuses a Struct nested deeper than the SDK allows', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 120; i++) deep = { a: deep };
    const bytes = Buffer.from(
      RunFunctionRequest.encode(RunFunctionRequest.fromPartial({ input: deep as Record<string, unknown> })).finish(),
    );
    expect(() => RunFunctionRequest.decode(bytes)).toThrow(/recursion limit/);
    expect(() => decodeRequest(bytes)).toThrow(/recursion limit/);
  });

  // What no SDK encoder writes but another client may: entries without a value, a Value with two kinds set.
  it.each([
    { name: 'an entry whose Value is empty', struct: [0x0a, 0x05, 0x0a, 0x01, 0x61, 0x12, 0x00] },
    { name: 'an entry without a Value', struct: [0x0a, 0x03, 0x0a, 0x01, 0x62] },
    {
      name: 'a Value with a number and a string',
      struct: [0x0a, 0x11, 0x0a, 0x01, 0x63, 0x12, 0x0c, 0x1a, 0x01, 0x78, 0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f],
    },
    { name: 'a Value with a bool and null', struct: [0x0a, 0x09, 0x0a, 0x01, 0x64, 0x12, 0x04, 0x08, 0x00, 0x20, 0x01] },
    { name: 'a list holding an empty Value', struct: [0x0a, 0x09, 0x0a, 0x01, 0x65, 0x12, 0x04, 0x32, 0x02, 0x0a, 0x00] },
  ])('reads $name as the SDK does', ({ struct }) => {
    const bytes = Buffer.from([0x22, struct.length, ...struct]);
    const want = RunFunctionRequest.decode(bytes);
    expect(decodeRequest(bytes)).toStrictEqual(want);
  });

  it('skips fields it does not know, as the SDK does', () => {
    const known = Buffer.from(RunFunctionRequest.encode(requestOf({ a: 1 }, { kind: 'X' })).finish());
    // field 99, varint 5; field 98, a length-delimited "zz"
    const bytes = Buffer.concat([Buffer.from([0x98, 0x06, 0x05, 0x92, 0x06, 0x02, 0x7a, 0x7a]), known]);
    expect(decodeRequest(bytes)).toStrictEqual(RunFunctionRequest.decode(bytes));
  });
});

describe('encodeResponse', () => {
  const responses = (): { name: string; rsp: RunFunctionResponse }[] => [
    ...requests().map(({ name, req }) => ({
      name: `response to ${name}`,
      rsp: runFunction(decodeRequest(Buffer.from(RunFunctionRequest.encode(req).finish()))),
    })),
    ...Array.from({ length: 40 }, (_, i) => {
      const r = rng(1000 + i);
      return {
        name: `random ${i}`,
        rsp: RunFunctionResponse.fromPartial({
          meta: { tag: `t${i}`, ttl: { seconds: 60, nanos: 5 } },
          desired: {
            composite: { resource: objectTree(r), connectionDetails: { k: Buffer.from('v') }, ready: Ready.READY_UNSPECIFIED },
            resources: {
              x: { resource: objectTree(r), connectionDetails: {}, ready: Ready.READY_FALSE },
              '': { resource: undefined, connectionDetails: {}, ready: -1 },
            },
          },
          results: [{ severity: Severity.SEVERITY_WARNING, message: 'm', reason: 'R', target: Target.TARGET_COMPOSITE_AND_CLAIM }],
          conditions: [{ type: 'Ready', status: Status.STATUS_CONDITION_TRUE, reason: 'Available', message: 'ok' }],
          context: i % 2 ? objectTree(r) : undefined,
          output: i % 3 ? objectTree(r) : undefined,
          requirements:
            i % 4 ? undefined : { extraResources: { a: { apiVersion: 'v1', kind: 'Secret', matchName: 'n' } }, resources: {}, schemas: {} },
        }),
      };
    }),
  ];

  it.each(responses())('$name reads back as what the SDK writes', ({ rsp }) => {
    const ours = RunFunctionResponse.decode(encodeResponse(rsp));
    expect(ours).toStrictEqual(RunFunctionResponse.decode(RunFunctionResponse.encode(rsp).finish()));
  });

  it('writes a resource larger than the scratch buffer', () => {
    const big = { data: 'x'.repeat(200_000), list: Array.from({ length: 5000 }, (_, i) => ({ i, s: `é${i}` })) };
    const rsp = RunFunctionResponse.fromPartial({ desired: { resources: { big: { resource: big, connectionDetails: {}, ready: 1 } } } });
    expect(RunFunctionResponse.decode(encodeResponse(rsp)).desired?.resources.big?.resource).toStrictEqual(big);
  });

  it('refuses a value protobuf cannot hold, with the SDK message', () => {
    const rsp = RunFunctionResponse.fromPartial({ context: { n: 1n } as unknown as Record<string, unknown> });
    expect(() => RunFunctionResponse.encode(rsp)).toThrow('Unsupported any value type: bigint');
    expect(() => encodeResponse(rsp)).toThrow('Unsupported any value type: bigint');
  });
});
