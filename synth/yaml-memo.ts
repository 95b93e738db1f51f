/**
 * synth's YAML, remembered between runs. The yaml package writes about 1 MB of YAML a second (a synth writes 0.4 MB)
 * and, cold, reads the heads of the 29 CRDs under schemas/ in 0.1 s: most of a run in which nothing changed. Both are
 * functions of their input, yaml's version and the options alone, so a run looks each up by a hash of the input (an
 * object's JSON, a text) and computes only what it has not seen; the file keeps what the last run used, nothing
 * older. What JSON cannot tell apart from another value (a Date, NaN, -0, a class instance) is never remembered.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { parse, parseDocument } from 'yaml';
import { toYaml, YAML_OPTIONS } from './synth';

/** Reads and writes YAML as synth does (SynthOptions.yaml). */
export interface SynthYaml {
  readonly toYaml: (objects: readonly unknown[]) => string;
  readonly parse: (text: string) => unknown;
}

/** What else the results depend on: the memo of another yaml, other options or another toYaml is not read. */
function memoVersion(): string {
  const yaml = (createRequire(import.meta.url)('yaml/package.json') as { version: string }).version;
  return createHash('sha256')
    .update(JSON.stringify([yaml, YAML_OPTIONS, toYaml.toString()]))
    .digest('base64url');
}

const hash = (text: string): string => createHash('sha256').update(text).digest('base64url');

export class YamlMemo implements SynthYaml {
  private readonly version = memoVersion();
  /** By `y<hash of the objects' JSON>` their YAML, by `p<hash of a text>` its value's JSON. */
  private readonly before = new Map<string, string>();
  private readonly used = new Map<string, string>();
  private missed = 0;

  /** `file` holds the memo (synth keeps it in node_modules/.cache/klutch-kit); missing or unreadable is empty. */
  constructor(private readonly file: string) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { version?: string; entries?: Record<string, string> };
      if (saved.version === this.version) for (const [k, v] of Object.entries(saved.entries ?? {})) this.before.set(k, v);
    } catch {
      // No memo yet, or one cut short: everything is computed.
    }
  }

  /** `toYaml`, from the memo where the objects were seen. */
  readonly toYaml = (objects: readonly unknown[]): string => {
    if (!objects.every(plainJson)) return toYaml(objects);
    return this.lookUp(`y${hash(JSON.stringify(objects))}`, () => toYaml(objects));
  };

  /** yaml's `parse`, from the memo where the text was seen. */
  readonly parse = (text: string): unknown => {
    const key = `p${hash(text)}`;
    const known = this.used.get(key) ?? this.before.get(key);
    if (known !== undefined) {
      this.used.set(key, known);
      return JSON.parse(known) as unknown;
    }
    // A text yaml warns of or refuses is read by parse every time, so that it says so every time.
    const doc = parseDocument(text);
    if (doc.warnings.length > 0 || doc.errors.length > 0) return parse(text) as unknown;
    const value = doc.toJS() as unknown;
    if (plainJson(value)) this.lookUp(key, () => JSON.stringify(value));
    return value;
  };

  private lookUp(key: string, compute: () => string): string {
    let value = this.used.get(key) ?? this.before.get(key);
    if (value === undefined) {
      value = compute();
      this.missed++;
    }
    this.used.set(key, value);
    return value;
  }

  /** Writes what this run used, if it is not what was read. */
  save(): void {
    if (this.missed === 0 && this.used.size === this.before.size) return;
    const tmp = `${this.file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      writeFileSync(tmp, JSON.stringify({ version: this.version, entries: Object.fromEntries(this.used) }));
      renameSync(tmp, this.file); // whole or not at all, also when two runs save at once
    } catch {
      rmSync(tmp, { force: true }); // a memo is only worth a faster next run
    }
  }
}

/**
 * Whether JSON.stringify tells this value apart from every other the way YAML does: strings, booleans, null, finite
 * numbers but -0, and arrays and plain objects of those (an undefined property is left out by both).
 */
export function plainJson(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object': {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (v[i] === undefined || !plainJson(v[i])) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      // for-in, not Object.values: no array per object (that walk took 20 ms of a run); the prototype has no keys.
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (x !== undefined && !plainJson(x)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}
