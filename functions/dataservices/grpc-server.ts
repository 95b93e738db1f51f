/**
 * The function's gRPC server: the SDK's FunctionRunner service and runner, with the codec of codec.ts in place of
 * the SDK's generated one (the wire format is the same; the work per call is not). Otherwise what the SDK's
 * `newGrpcServer` builds.
 */
import * as grpc from '@grpc/grpc-js';
import {
  FunctionRunnerServiceService,
  type FunctionRunner,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '@crossplane-org/function-sdk-typescript';
import type { Logger } from 'pino';
import { decodeRequest, encodeResponse } from './codec';

/** FunctionRunnerService as the SDK defines it, reading requests and writing responses with codec.ts. */
export const FUNCTION_RUNNER_SERVICE = {
  runFunction: {
    ...FunctionRunnerServiceService.runFunction,
    requestDeserialize: decodeRequest,
    responseSerialize: encodeResponse,
  },
} satisfies grpc.ServiceDefinition;

/** A gRPC server (not yet bound) that runs every RunFunction call through `runner`. */
export function newFunctionServer(runner: FunctionRunner, logger: Logger): grpc.Server {
  const server = new grpc.Server();
  server.addService(FUNCTION_RUNNER_SERVICE, {
    runFunction: (
      call: grpc.ServerUnaryCall<RunFunctionRequest, RunFunctionResponse>,
      callback: grpc.sendUnaryData<RunFunctionResponse>,
    ) => {
      runner.RunFunction(call.request, logger).then(
        (rsp) => callback(null, rsp),
        (e: unknown) => {
          logger.error({ err: e }, 'RunFunction failed');
          callback(e as grpc.ServiceError);
        },
      );
    },
  });
  return server;
}
