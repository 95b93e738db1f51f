/** Work-queue keys: `<namespace>/<name>` for namespaced objects, `<name>` for cluster-scoped ones (client-go's form). */
import type { ReconcileResult } from './controller';
import { TerminalError } from './errors';

export interface ObjectRef {
  readonly namespace?: string;
  readonly name: string;
}

/** The key of an object (anything with `metadata.name` and maybe `metadata.namespace`). */
export function objectKey(obj: { metadata?: { name?: string; namespace?: string } }): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error('cannot key an object without metadata.name');
  return obj.metadata?.namespace ? `${obj.metadata.namespace}/${name}` : name;
}

/** The namespace and name of a key made by `objectKey`. */
export function splitKey(key: string): ObjectRef {
  const i = key.indexOf('/');
  if (i < 0) return { name: key };
  if (key.indexOf('/', i + 1) >= 0 || i === 0 || i === key.length - 1)
    throw new Error(`"${key}" is not a key: use <namespace>/<name> or <name>`);
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/**
 * A reconcile over typed refs: the queue's key is split here, once, so reconciles take `{ namespace, name }` and never
 * parse strings. A key that is not one (a bug in a watch's mapping) fails the reconcile as terminal.
 */
export function byRef<Ctx>(
  reconcile: (ref: ObjectRef, ctx: Ctx) => Promise<ReconcileResult>,
): (key: string, ctx: Ctx) => Promise<ReconcileResult> {
  return async (key, ctx) => {
    let ref: ObjectRef;
    try {
      ref = splitKey(key);
    } catch (e) {
      throw new TerminalError((e as Error).message, { cause: e });
    }
    return reconcile(ref, ctx);
  };
}

/** The key of a ref (`objectKey` of an object with that namespace and name). */
export function refKey(ref: ObjectRef): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}
