/** Durations on the command line, as kubectl writes them: `90s`, `10m`, `1m30s`, `2h`, `0`. */

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a duration; throws naming the flag and the accepted form. */
export function parseDuration(flag: string, text: string): number {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== text)
    throw new Error(`${flag}: "${text}" is not a duration; write it like 90s, 10m or 1m30s`);
  return Math.round(parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]!]!, 0));
}

/** `9m05s`, `45s`: what a countdown shows. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return m ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}
