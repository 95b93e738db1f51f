/**
 * bench/function's floor: the function's own server (flags, codec, metrics wrapper, gRPC) answering every call with
 * an empty response, so the bench can tell the server's cost per call from the composing's.
 */
import type { RunFunctionRequest, RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { newLogger } from '../../lib/log';
import { TTL } from '../../functions/dataservices/fn';
import { parseServerArgs, startFunctionServer } from '../../functions/dataservices/server';

const opts = parseServerArgs(process.argv.slice(2), process.env);
if (typeof opts === 'string') throw new Error('the floor takes the function server flags');
await startFunctionServer(opts, newLogger({ level: 'info' }), {
  async RunFunction(req: RunFunctionRequest): Promise<RunFunctionResponse> {
    return {
      meta: { tag: req.meta?.tag ?? '', ttl: TTL },
      desired: undefined,
      results: [],
      conditions: [],
      context: undefined,
      requirements: undefined,
    };
  },
});
