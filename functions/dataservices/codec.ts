/**
 * The function's wire codec: RunFunctionRequest and RunFunctionResponse with every google.protobuf.Struct read into,
 * and written from, plain JS values in one pass. The SDK's generated codec builds a `{ fields: { k: Value } }` tree
 * first and converts it afterwards (`Struct.unwrap(Struct.decode(...))`, `Struct.encode(Struct.wrap(...))`), which
 * cost 28% of a call and most of its garbage (docs/decisions/function-performance.md).
 *
 * Only the Struct-heavy fields take the fast path (observed, desired, input and context of the request; desired,
 * context and output of the response). Every other field goes through the SDK's generated codec, so the objects the
 * handler sees have the SDK's shapes exactly; codec.test.ts compares both codecs on every fixture and on random trees.
 */
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { RunFunctionRequest, RunFunctionResponse, type Resource, type State } from '@crossplane-org/function-sdk-typescript';

type Obj = Record<string, unknown>;

/** The SDK's limit on nested messages, counted as its decoders count them (each message one level). */
const MAX_DEPTH = 100;

function checkDepth(depth: number): void {
  if (depth >= MAX_DEPTH) throw new Error('protobuf decode recursion limit exceeded');
}

// --- reading -----------------------------------------------------------------------------------------------------
// The SDK's reader (@bufbuild/protobuf's BinaryReader) reads every scalar, so strings, varints, bounds and skipped
// fields behave as with the generated code, malformed input included; loops end where the generated ones end (at a
// message's end, or early at tag 0 or an end-group tag). Only the objects built differ: plain values, no Value tree.

/** The end of the length-delimited field that starts here (its length read first). */
function endOf(r: BinaryReader): number {
  const len = r.uint32();
  return r.pos + len;
}

/** Ends a loop as the generated decoders do: at tag 0 or an end-group tag, else skips the field. */
function skipOrStop(r: BinaryReader, tag: number): boolean {
  if ((tag & 7) === 4 || tag === 0) return true;
  r.skip(tag & 7);
  return false;
}

function decodeStruct(r: BinaryReader, end: number, depth: number): Obj {
  checkDepth(depth);
  const out: Obj = {};
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 10) {
      // FieldsEntry { string key = 1; Value value = 2; }: an entry without a value is dropped, as the SDK does.
      checkDepth(depth + 1);
      const entryEnd = endOf(r);
      let key = '';
      let value: unknown;
      while (r.pos < entryEnd) {
        const t = r.uint32();
        if (t === 10) key = r.string();
        else if (t === 18) value = decodeValue(r, endOf(r), depth + 2);
        else if (skipOrStop(r, t)) break;
      }
      if (value !== undefined) out[key] = value;
    } else if (skipOrStop(r, tag)) break;
  }
  return out;
}

function decodeList(r: BinaryReader, end: number, depth: number): unknown[] {
  checkDepth(depth);
  const out: unknown[] = [];
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 10) out.push(decodeValue(r, endOf(r), depth + 1));
    else if (skipOrStop(r, tag)) break;
  }
  return out;
}

/** A Value as the SDK's `Value.unwrap` reads it: string, number, bool, struct, list, null in that order of priority. */
function decodeValue(r: BinaryReader, end: number, depth: number): unknown {
  checkDepth(depth);
  let str: string | undefined;
  let num: number | undefined;
  let bool: boolean | undefined;
  let struct: Obj | undefined;
  let list: unknown[] | undefined;
  let isNull = false;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 8) {
      r.int32();
      isNull = true;
    } else if (tag === 17) num = r.double();
    else if (tag === 26) str = r.string();
    else if (tag === 32) bool = r.bool();
    else if (tag === 42) struct = decodeStruct(r, endOf(r), depth + 1);
    else if (tag === 50) list = decodeList(r, endOf(r), depth + 1);
    else if (skipOrStop(r, tag)) break;
  }
  if (str !== undefined) return str;
  if (num !== undefined) return num;
  if (bool !== undefined) return bool;
  if (struct !== undefined) return struct;
  if (list !== undefined) return list;
  return isNull ? null : undefined;
}

function decodeResource(r: BinaryReader, end: number, depth: number): Resource {
  checkDepth(depth);
  const out: Resource = { resource: undefined, connectionDetails: {}, ready: 0 };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 10) out.resource = decodeStruct(r, endOf(r), depth + 1);
    else if (tag === 18) {
      checkDepth(depth + 1);
      const entryEnd = endOf(r);
      let key = '';
      let value: Buffer = Buffer.alloc(0);
      while (r.pos < entryEnd) {
        const t = r.uint32();
        if (t === 10) key = r.string();
        else if (t === 18) value = r.bytes() as Buffer;
        else if (skipOrStop(r, t)) break;
      }
      out.connectionDetails[key] = value;
    } else if (tag === 24) out.ready = r.int32();
    else if (skipOrStop(r, tag)) break;
  }
  return out;
}

function decodeState(r: BinaryReader, end: number, depth: number): State {
  checkDepth(depth);
  const out: State = { composite: undefined, resources: {} };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 10) out.composite = decodeResource(r, endOf(r), depth + 1);
    else if (tag === 18) {
      checkDepth(depth + 1);
      const entryEnd = endOf(r);
      let key = '';
      let value: Resource | undefined;
      while (r.pos < entryEnd) {
        const t = r.uint32();
        if (t === 10) key = r.string();
        else if (t === 18) value = decodeResource(r, endOf(r), depth + 2);
        else if (skipOrStop(r, t)) break;
      }
      if (value !== undefined) out.resources[key] = value;
    } else if (skipOrStop(r, tag)) break;
  }
  return out;
}

/**
 * Decodes a RunFunctionRequest. observed (2), desired (3), input (4) and context (5) are read here; the other fields
 * (meta, credentials, extra and required resources, schemas, and any the SDK adds) are cut out and given to the SDK's
 * decoder, whose object is the result.
 */
export function decodeRequest(buf: Uint8Array): RunFunctionRequest {
  const r = new BinaryReader(buf);
  const rest: Uint8Array[] = [];
  let observed: State | undefined;
  let desired: State | undefined;
  let input: Obj | undefined;
  let context: Obj | undefined;
  while (r.pos < r.len) {
    const start = r.pos;
    const tag = r.uint32();
    if (tag === 18) observed = decodeState(r, endOf(r), 1);
    else if (tag === 26) desired = decodeState(r, endOf(r), 1);
    else if (tag === 34) input = decodeStruct(r, endOf(r), 1);
    else if (tag === 42) context = decodeStruct(r, endOf(r), 1);
    else if ((tag & 7) === 4 || tag === 0) break;
    else {
      r.skip(tag & 7);
      rest.push(buf.subarray(start, r.pos));
    }
  }
  const req = RunFunctionRequest.decode(rest.length === 1 ? (rest[0] as Uint8Array) : Buffer.concat(rest));
  if (observed !== undefined) req.observed = observed;
  if (desired !== undefined) req.desired = desired;
  if (input !== undefined) req.input = input;
  if (context !== undefined) req.context = context;
  return req;
}

// --- writing -----------------------------------------------------------------------------------------------------

/** One scratch buffer for every response: encoding is synchronous, and the result is copied out at its size. */
let scratch = Buffer.allocUnsafe(64 * 1024);

class Writer {
  buf = scratch;
  pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    if (next.length <= 1024 * 1024) scratch = next;
  }

  raw(v: Uint8Array): void {
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  varint(v: number): void {
    this.ensure(10);
    const b = this.buf;
    if (v < 0) {
      // int32 enums below zero: ten bytes, sign-extended to 64 bits, as protobuf writes them.
      let lo = v >>> 0;
      for (let i = 0; i < 4; i++) {
        b[this.pos++] = (lo & 0x7f) | 0x80;
        lo >>>= 7;
      }
      b[this.pos++] = (lo & 0x0f) | 0x70 | 0x80;
      for (let i = 0; i < 4; i++) b[this.pos++] = 0xff;
      b[this.pos++] = 0x01;
      return;
    }
    while (v > 0x7f) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v = v > 0xffffffff ? Math.floor(v / 128) : v >>> 7;
    }
    b[this.pos++] = v;
  }

  string(s: string): void {
    // ASCII strings (almost all of Kubernetes) are one byte per char: their length is known before writing.
    this.ensure(s.length * 3 + 5);
    const start = this.begin();
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.finish(start);
  }

  bytes(v: Uint8Array): void {
    this.varint(v.length);
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** Reserves one byte for the length of a nested message; `finish` writes it, moving the body if it needs more. */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  finish(start: number): void {
    const len = this.pos - start - 1;
    if (len < 0x80) {
      this.buf[start] = len;
      return;
    }
    let extra = 0;
    for (let l = len >>> 7; l > 0; l >>>= 7) extra++;
    this.ensure(extra);
    this.buf.copy(this.buf, start + 1 + extra, start + 1, this.pos);
    this.pos += extra;
    const end = this.pos;
    this.pos = start;
    this.varint(len);
    this.pos = end;
  }

  /** A copy at its size (small ones come from Node's buffer pool). */
  result(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }
}

/** A value as the SDK's `Value.wrap` takes it (undefined becomes an empty Value; other types are refused the same). */
function encodeValue(w: Writer, v: unknown): void {
  if (v === null) {
    w.varint(8);
    w.varint(0);
  } else if (typeof v === 'boolean') {
    w.varint(32);
    w.varint(v ? 1 : 0);
  } else if (typeof v === 'number') {
    w.varint(17);
    w.double(v);
  } else if (typeof v === 'string') {
    w.varint(26);
    w.string(v);
  } else if (Array.isArray(v)) {
    w.varint(50);
    const start = w.begin();
    for (const item of v) {
      w.varint(10);
      const s = w.begin();
      encodeValue(w, item);
      w.finish(s);
    }
    w.finish(start);
  } else if (typeof v === 'object') {
    w.varint(42);
    const start = w.begin();
    encodeStructFields(w, v as Obj);
    w.finish(start);
  } else if (typeof v !== 'undefined') {
    throw new Error(`Unsupported any value type: ${typeof v}`);
  }
}

function encodeStructFields(w: Writer, o: Obj): void {
  for (const key of Object.keys(o)) {
    const v = o[key];
    if (v === undefined) continue;
    w.varint(10);
    const start = w.begin();
    if (key !== '') {
      w.varint(10);
      w.string(key);
    }
    w.varint(18);
    const vs = w.begin();
    encodeValue(w, v);
    w.finish(vs);
    w.finish(start);
  }
}

function encodeStruct(w: Writer, field: number, o: Obj): void {
  w.varint((field << 3) | 2);
  const start = w.begin();
  encodeStructFields(w, o);
  w.finish(start);
}

function encodeResource(w: Writer, r: Resource): void {
  if (r.resource !== undefined) encodeStruct(w, 1, r.resource);
  for (const [key, value] of Object.entries(r.connectionDetails)) {
    w.varint(18);
    const start = w.begin();
    if (key !== '') {
      w.varint(10);
      w.string(key);
    }
    if (value.length !== 0) {
      w.varint(18);
      w.bytes(value);
    }
    w.finish(start);
  }
  if (r.ready !== 0) {
    w.varint(24);
    w.varint(r.ready);
  }
}

function encodeState(w: Writer, field: number, s: State): void {
  w.varint((field << 3) | 2);
  const start = w.begin();
  if (s.composite !== undefined) {
    w.varint(10);
    const c = w.begin();
    encodeResource(w, s.composite);
    w.finish(c);
  }
  for (const [key, value] of Object.entries(s.resources)) {
    w.varint(18);
    const e = w.begin();
    if (key !== '') {
      w.varint(10);
      w.string(key);
    }
    if (value !== undefined) {
      w.varint(18);
      const rs = w.begin();
      encodeResource(w, value);
      w.finish(rs);
    }
    w.finish(e);
  }
  w.finish(start);
}

/**
 * Encodes a RunFunctionResponse: desired (2), context (4) and output (7) here, the rest (meta, results, requirements,
 * conditions) by the SDK's encoder. Fields come out of number order, which protobuf allows and every parser reads.
 */
export function encodeResponse(rsp: RunFunctionResponse): Buffer {
  const head = RunFunctionResponse.encode({ ...rsp, desired: undefined, context: undefined, output: undefined }).finish();
  const w = new Writer();
  w.raw(head);
  if (rsp.desired !== undefined) encodeState(w, 2, rsp.desired);
  if (rsp.context !== undefined) encodeStruct(w, 4, rsp.context);
  if (rsp.output !== undefined) encodeStruct(w, 7, rsp.output);
  return w.result();
}
