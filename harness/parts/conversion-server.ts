/**
 * The conversion server (conversion/main.ts) as a process on loopback, where an API server of the harness calls it
 * by URL: its bundle, a serving certificate for 127.0.0.1 from a CA of its own, the table synth rendered.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleProgram } from '../../synth/deployables';
import { createCa } from '../cluster/pki';
import { freePorts, launch, probe, waitReady, type Proc } from '../cluster/processes';
import { repoRoot } from '../root';

export interface RunningConversionServer {
  /** `https://127.0.0.1:<port>`: the XRDs' webhook URL without its path. */
  readonly url: string;
  /** The PEM CA the XRDs' caBundle names. */
  readonly ca: string;
  readonly proc: Proc;
  stop(): Promise<void>;
}

/** Starts it with `table` (conversion/conversions.json as synth rendered it); logs in `dir`. */
export async function startConversionProcess(o: { readonly table: string; readonly dir: string }): Promise<RunningConversionServer> {
  mkdirSync(o.dir, { recursive: true });
  const ca = await createCa('klutch-kit conversion CA');
  const pair = await ca.issue({ commonName: 'klutch-kit-conversion', ips: ['127.0.0.1'] });
  const files = { table: join(o.dir, 'conversions.json'), cert: join(o.dir, 'tls.crt'), key: join(o.dir, 'tls.key') };
  writeFileSync(files.table, o.table);
  writeFileSync(files.cert, pair.cert);
  writeFileSync(files.key, pair.key, { mode: 0o600 });
  const [port] = await freePorts(1);
  const bundle = await bundleProgram(repoRoot(), 'conversion', 'conversion/main.ts');
  const proc = launch({
    command: 'setpriv',
    args: [
      '--pdeathsig',
      'TERM',
      process.execPath,
      bundle,
      `--table=${files.table}`,
      `--tls-cert-file=${files.cert}`,
      `--tls-key-file=${files.key}`,
      `--address=127.0.0.1:${port}`,
    ],
    role: 'conversion',
    owner: 'conversion',
    logDir: o.dir,
    env: { PATH: process.env.PATH },
  });
  const url = `https://127.0.0.1:${port}`;
  await waitReady(
    proc,
    () =>
      probe(`${url}/healthz`).then(
        (r) => r.code === 200,
        () => false,
      ),
    30_000,
  );
  return { url, ca: ca.cert, proc, stop: () => proc.stop(5_000) };
}
