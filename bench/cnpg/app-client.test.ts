import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { probeScript, shQuote } from './app-client';

const sh = (script: string) => spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8' });

describe("bench/cnpg's app-cluster client", () => {
  it.each([["it's"], ['$(touch /nonexistent)'], ['a"b`c\\d'], [''], ['p@ss w0rd!;']])('passes %j to sh as it is', (v) => {
    expect(sh(`printf %s ${shQuote(v)}`).stdout).toBe(v);
  });

  it("exports the binding's credentials as libpq's variables, every value quoted", () => {
    const script = probeScript({ instance_service: '10.96.200.3', database: 'app', username: 'app', password: "x'; exit 9; '" });
    // Only the exports: the loops would reach for pg_isready.
    const exports = script.split('\n')[0]!;
    const r = sh(`${exports}; printf '%s|' "$PGHOST" "$PGDATABASE" "$PGUSER" "$PGPASSWORD" "$PGCONNECT_TIMEOUT"`);
    expect([r.status, r.stdout]).toEqual([0, "10.96.200.3|app|app|x'; exit 9; '|2|"]);
  });
});
