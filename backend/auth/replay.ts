/**
 * Used states, remembered until they expire, so a state (and with it the code that came with it) works once. The
 * HTTP side keeps no other state: this guard is per replica and bounded; across replicas the flow cookie (cleared on
 * first use) and the OpenID provider (which refuses a code used before) refuse a replay.
 */
export class ReplayGuard {
  /** id → expiry (ms); insertion order is expiry order, as every entry lives the same time. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly max = 100_000) {}

  /** Records `id` until `expiresAt`; false when it was recorded before (a replay). */
  use(id: string, expiresAt: number, now = Date.now()): boolean {
    for (const [k, exp] of this.seen) {
      if (exp > now && this.seen.size < this.max) break;
      this.seen.delete(k);
    }
    if (this.seen.has(id)) return false;
    this.seen.set(id, expiresAt);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
