/**
 * Go's durations, as Klutch's flags and Kubernetes' objects write them: one parser and one formatter for every
 * command line (backend, konnector, kubectl-bind) and every `5m0s` a Klutch object carries. Each caller words its own
 * error around a refusal, naming its flag.
 */

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Milliseconds of `500ms`, `15s`, `2m30s`, `1.5h` or `0`; undefined when `text` is no such duration. */
export function parseGoDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== text) return undefined;
  return Math.round(parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]!]!, 0));
}

/** Go's time.Duration.String() for whole seconds: `5m0s`, `20s`, `1h0m0s`. */
export function formatGoDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}
