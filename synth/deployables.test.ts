import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/crossplane/catalog';
import { bundleDeployable, deployable } from './deployables';

/** The files esbuild read for a bundle (the manifest scripts/bundle.mjs keeps beside it). */
async function inputsOf(name: string): Promise<string[]> {
  const file = await bundleDeployable(ROOT, deployable(name));
  return (JSON.parse(readFileSync(`${file}.inputs.json`, 'utf8')) as { inputs: { path: string }[] }).inputs.map((i) => i.path);
}

describe('runtime bundles', () => {
  // The construct libraries are for synth; a process that only runs carries none of them (they were ~357 KiB each).
  it.each(['backend', 'konnector', 'function', 'conversion'])(
    '%s carries no construct library (cdk8s, cdk8s-plus, constructs)',
    async (name) => {
      const inputs = await inputsOf(name);
      expect(inputs.length).toBeGreaterThan(10);
      expect(inputs.filter((p) => /\/node_modules\/(cdk8s|cdk8s-plus-\d+|constructs)\//.test(p))).toEqual([]);
    },
  );

  // The function serves gRPC with node:http2 (grpc-server.ts); grpc-js and what it brings stay out of its bundle.
  it('function carries no grpc-js, proto-loader or protobufjs', async () => {
    const inputs = await inputsOf('function');
    expect(inputs.filter((p) => /\/node_modules\/(@grpc\/|protobufjs\/|@protobufjs\/)/.test(p))).toEqual([]);
    expect(inputs.some((p) => p.endsWith('functions/dataservices/grpc-js-unused.ts'))).toBe(true);
  });
});
