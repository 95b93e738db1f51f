/** CEL literals for rules written from data (plan names, composition names, service versions). */

/** A CEL list literal of strings. */
export function celList(values: readonly string[]): string {
  return `[${values.map(celString).join(', ')}]`;
}

/** A CEL string literal. */
export function celString(v: string): string {
  return `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}
