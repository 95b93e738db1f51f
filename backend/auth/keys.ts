/**
 * The keys that seal cookies and state, from a file (a mounted Secret): one base64 key a line, at least 32 bytes
 * each. The first line seals; every line opens, so keys rotate without logging anyone out: add a new first line,
 * and drop the old one once the longest-lived cookie (one hour) has expired. The file is re-read when it changes.
 */
import { createHash, hkdfSync } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

export interface Key {
  /** First 8 bytes of the key's SHA-256, hex: names the key in a sealed token without revealing it. */
  readonly id: string;
  readonly bytes: Buffer;
}

const MIN_KEY_BYTES = 32;
const RECHECK_MS = 1000;

/** Parses the file's text; errors name the line and say what a key must look like. */
export function parseKeys(text: string, source: string): Key[] {
  const keys: Key[] = [];
  text.split('\n').forEach((line, i) => {
    const v = line.trim();
    if (!v || v.startsWith('#')) return;
    // Standard or URL-safe alphabet, padded or not.
    const bytes = Buffer.from(v, 'base64');
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v) || bytes.length < MIN_KEY_BYTES) {
      throw new Error(
        `${source}: line ${i + 1} is not a base64 key of ${MIN_KEY_BYTES} or more bytes; make one with \`openssl rand -base64 32\``,
      );
    }
    keys.push(keyOf(bytes));
  });
  if (keys.length === 0) throw new Error(`${source}: holds no key; put one base64 key (openssl rand -base64 32) on the first line`);
  return keys;
}

function keyOf(bytes: Buffer): Key {
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 16), bytes };
}

/**
 * The one sealing key that Klutch's `--cookie-signing-key` (32 or 64 bytes) and optional `--cookie-encryption-key`
 * (16, 24 or 32 bytes) stand for: HKDF-SHA256 of both (the encryption key as salt, so no two pairs give one key).
 * The same flags give the same key on every replica and after every restart; there is nothing to rotate to.
 */
export function klutchCookieKey(signing: Buffer, encryption?: Buffer): Key {
  const info = 'klutch-kit cookie key from --cookie-signing-key and --cookie-encryption-key';
  return keyOf(Buffer.from(hkdfSync('sha256', signing, encryption ?? Buffer.alloc(0), info, 32)));
}

/** The keys of a file, re-read when its modification time or size changes (checked at most once a second). */
export class KeyRing {
  private keys: Key[];
  private stamp: string;
  private checkedAt = 0;

  constructor(private readonly file: string) {
    this.stamp = this.fileStamp();
    this.keys = parseKeys(readFileSync(file, 'utf8'), file);
  }

  /** The current keys, newest (sealing) first. A file that turns unreadable or invalid keeps the last good keys. */
  current(now = Date.now()): readonly Key[] {
    if (now - this.checkedAt >= RECHECK_MS) {
      this.checkedAt = now;
      try {
        const stamp = this.fileStamp();
        if (stamp !== this.stamp) {
          this.keys = parseKeys(readFileSync(this.file, 'utf8'), this.file);
          this.stamp = stamp;
        }
      } catch {
        // Kept: a Secret update swaps a symlink, and a read in between may fail once; the next check succeeds.
      }
    }
    return this.keys;
  }

  private fileStamp(): string {
    const s = statSync(this.file);
    return `${s.mtimeMs}:${s.size}:${s.ino}`;
  }
}
