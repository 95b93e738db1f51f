/** Work-queue keys: `<namespace>/<name>` for namespaced objects, `<name>` for cluster-scoped ones (client-go's form). */

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
