/**
 * Writing output without writing what is there already (synth's): a file whose bytes are the same is left alone, so
 * a run in which nothing changed reads its output and writes nothing (no folders emptied and filled again).
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** Writes `text` to `file` unless the file holds these bytes already; says whether it wrote. */
export function writeIfChanged(file: string, text: string): boolean {
  const bytes = Buffer.from(text);
  try {
    if (readFileSync(file).equals(bytes)) return false;
  } catch {
    // Not there yet (or not a file: writing says why).
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  return true;
}

/**
 * Makes each `root` folder below `outdir` hold exactly `files` (paths below outdir → content), as removing the roots
 * and writing every file would, but touching only what differs.
 */
export function replaceTree(outdir: string, roots: Iterable<string>, files: ReadonlyMap<string, string>): void {
  const folders = new Set<string>();
  for (const path of files.keys()) for (let d = dirname(path); d !== '.'; d = dirname(d)) folders.add(d);
  for (const root of roots) {
    const dir = join(outdir, root);
    let isFolder = false;
    try {
      isFolder = lstatSync(dir).isDirectory(); // a link is replaced, never followed
    } catch {
      // Not there yet.
    }
    if (isFolder) removeOthers(dir, root, files, folders);
    else rmSync(dir, { force: true });
  }
  for (const [path, text] of files) writeIfChanged(join(outdir, path), text);
}

/** Removes everything below `dir` (the folder `rel`) that is neither one of `files` nor a folder holding one. */
function removeOthers(dir: string, rel: string, files: ReadonlyMap<string, string>, folders: ReadonlySet<string>): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = `${rel}/${e.name}`;
    if (e.isDirectory() && folders.has(path)) removeOthers(join(dir, e.name), path, files, folders);
    else if (!(e.isFile() && files.has(path))) rmSync(join(dir, e.name), { recursive: true, force: true });
  }
}

/**
 * Copies `from` to `to` unless `to` is the copy made last time: its size and mtime (to the millisecond, as the copy is
 * given it) are `from`'s. The cached bundles are replaced, never written in place, so a new one has a new mtime.
 */
export function copyIfChanged(from: string, to: string): boolean {
  const src = statSync(from);
  const mtime = Math.round(src.mtimeMs);
  try {
    const dst = lstatSync(to);
    if (dst.isFile() && dst.size === src.size && Math.round(dst.mtimeMs) === mtime) return false;
  } catch {
    // Not there yet.
  }
  mkdirSync(dirname(to), { recursive: true });
  rmSync(to, { force: true }); // a link is replaced, never written through
  copyFileSync(from, to);
  utimesSync(to, src.atime, new Date(mtime));
  return true;
}

/** The sha256 of a file, hex, read in 1 MiB pieces: one Buffer of a 3.7 MB bundle cost more to map than to hash. */
export function sha256File(path: string): string {
  const hash = createHash('sha256');
  const piece = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(path, 'r');
  try {
    for (let n; (n = readSync(fd, piece, 0, piece.length, null)) > 0;) hash.update(piece.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}
