/** Reading errors through their `cause` chain: a wrap that only adds context keeps what the error is. */

/** The first error in `e`'s cause chain (`e` itself first) that `is` accepts; a cycle of causes ends. */
export function findCause(e: unknown, is: (c: unknown) => boolean): unknown {
  const seen = new Set<unknown>();
  for (let c: unknown = e; c !== undefined && c !== null && !seen.has(c); c = (c as { cause?: unknown }).cause) {
    if (is(c)) return c;
    seen.add(c);
    if (typeof c !== 'object') break;
  }
  return undefined;
}

/**
 * The first error of class `C` in `e`'s `cause` chain (`e` itself first), if any: a caller that decides by the kind
 * of error (terminal, a refusal to report as data) still sees it beneath a wrap that only added context.
 */
export function causeOf<C extends Error>(e: unknown, kind: abstract new (...args: never[]) => C): C | undefined {
  return findCause(e, (c) => c instanceof kind) as C | undefined;
}
