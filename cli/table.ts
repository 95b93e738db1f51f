/**
 * `text` safe for a terminal: every control character (C0, DEL, C1) written as `\xNN`, as kubectl escapes what it
 * prints. Messages come from the other side (a provider's status, a CRD's deprecation warning, a condition the
 * control plane wrote): an escape sequence in one must not move the cursor, rewrite the screen or set the clipboard.
 */
export function printable(text: string, o: { readonly lines?: boolean } = {}): string {
  // With `lines`, a message of several lines keeps them (an error and its detail); a carriage return is escaped.
  const control = o.lines ? /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g : /[\u0000-\u001f\u007f-\u009f]/g;
  return text.replace(control, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Tables as kubectl prints them: upper-case headers, columns padded by three spaces; every cell printable. */
export function table(headers: readonly string[], rawRows: readonly (readonly string[])[]): string {
  const rows = rawRows.map((r) => r.map((cell) => printable(cell)));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** `5s`, `3m`, `2h`, `4d`: the AGE column. */
export function age(timestamp: string | undefined, now = Date.now()): string {
  if (!timestamp) return '<unknown>';
  return span(now - Date.parse(timestamp));
}

/** A length of time as kubectl's AGE prints it (`45s`, `12m`, `5h`, `3d`); a negative one as none. */
export function span(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
