/**
 * What the function's bundle has in place of @grpc/grpc-js (synth/deployables.ts `replace`). The SDK's generated
 * module, whose codecs codec.ts uses, builds a grpc-js client constructor when it loads, and its serve and runtime
 * modules name grpc-js's server; the function serves with grpc-server.ts and calls nothing of them. Without grpc-js
 * (and the proto-loader and protobufjs it brings) the bundle is half the size and the process holds less
 * (docs/decisions/function-performance.md). Anything that does reach for grpc-js here fails with this message.
 */
const ABSENT = "grpc-js is not in the function's bundle (functions/dataservices/grpc-js-unused.ts): serve with grpc-server.ts";

function absent(): never {
  throw new Error(ABSENT);
}

/** The SDK calls it when it loads: the class it returns cannot be made. */
export function makeGenericClientConstructor(): new () => object {
  return class {
    constructor() {
      absent();
    }
  };
}

export class Client {
  constructor() {
    absent();
  }
}

export class Server {
  constructor() {
    absent();
  }
}

export const ServerCredentials = { createInsecure: absent, createSsl: absent };
export const credentials = { createInsecure: absent, createSsl: absent };
export const status = {};
