/**
 * The SBOM of each image a release publishes, one per image and architecture, written by syft from the OCI archive
 * that is pushed (SPDX 2.3 JSON). The images carry what syft reads: the Debian packages' records in
 * /var/lib/dpkg/status.d/ (harness/node/platform-images.ts), Node's own binary, and the package.json of every npm
 * package bundled into the program (synth/bundled-packages.ts).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../harness/cluster/processes';
import { ensureSyft } from '../harness/tools/syft';

export interface Sbom {
  /** The image's reference as released (`<registry>/<name>:<version>`) and the platform it was built for. */
  readonly image: string;
  readonly platform: string;
  /** Below the release folder. */
  readonly file: string;
}

const TIMEOUT_MS = 300_000;

/**
 * `syft scan oci-archive:<archive>` of each image; the SBOMs written below `<out>/sbom/`. syft asks the network for
 * nothing here: its update check is off, and its remote licence lookups are off by default.
 */
export async function writeSboms(
  out: string,
  images: readonly { readonly ref: string; readonly name: string; readonly arch: string; readonly archive: string }[],
  version: string,
  log: (line: string) => void,
): Promise<Sbom[]> {
  const syft = await ensureSyft(log);
  mkdirSync(join(out, 'sbom'), { recursive: true });
  const written: Sbom[] = [];
  for (const i of images) {
    const file = join('sbom', `${i.name}-linux-${i.arch}.spdx.json`);
    const r = await runCommand(
      syft,
      [
        'scan',
        `oci-archive:${i.archive}`,
        '--source-name',
        i.ref.slice(0, i.ref.lastIndexOf(':')),
        '--source-version',
        version,
        '--output',
        `spdx-json=${join(out, file)}`,
        '--quiet',
      ],
      { timeoutMs: TIMEOUT_MS, env: { ...process.env, SYFT_CHECK_FOR_APP_UPDATE: 'false' } },
    );
    if (r.code !== 0) throw new Error(`syft could not write the SBOM of ${i.ref} (linux/${i.arch}):\n${r.output.trim()}`);
    const packages = (JSON.parse(readFileSync(join(out, file), 'utf8')) as { packages?: unknown[] }).packages?.length ?? 0;
    log(`  ${file}: ${packages} packages`);
    written.push({ image: i.ref, platform: `linux/${i.arch}`, file });
  }
  return written;
}
