/** Durations as the plugin shows them (a flag's value is read by lib/flags.ts durationFlag). */

/** `9m05s`, `45s`: what a countdown shows. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return m ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}
