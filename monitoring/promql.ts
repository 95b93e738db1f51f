/**
 * The metric families a PromQL expression of ours reads. Our expressions write every selector with braces
 * (`klutch_konnector_binding_ready{}`), so the families are exactly the names before a `{`; a histogram's `_bucket`,
 * `_count` and `_sum` series belong to their family. The tests hold every alert and panel to that rule (each reads at
 * least one family) and check that a running process exports each family; promtool checks the syntax.
 */
const SELECTOR = /([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g;

export function metricFamilies(expr: string): string[] {
  const names = [...expr.matchAll(SELECTOR)].map((m) => (m[1] as string).replace(/_(bucket|count|sum)$/, ''));
  return [...new Set(names)].sort();
}
