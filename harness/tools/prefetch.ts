/**
 * `npm run tools`: builds every tool the tests, the sandbox and the benches use, one after the other, and prints how
 * long each took. `npm test` and `npm run sandbox` build the same tools on first use; this entry is for warming a
 * machine ahead of time (CI images, a laptop before a train ride) and for measuring the cold path part by part.
 *
 * `--debian` also installs the Debian packages of every program the harness runs (harness/tools/programs.ts).
 */
import { ensureCnpgManager } from './cloudnative-pg';
import { ensureCoreDns } from './coredns';
import { ensureCrank, ensureValidateCache } from './crank';
import { ensureCrossplane } from './crossplane';
import { ensureHelm } from './helm';
import { ensureKrew } from './krew';
import { ensureKubeBinary } from './kube';
import { ensureNetworkPolicies } from './network-policies';
import { ensurePromtool } from './promtool';
import { ensureProviderKubernetes } from './provider-kubernetes';
import { ensureSyft } from './syft';
import { ensureVersitygw } from './versitygw';
import { ensurePrograms, type ProgramName, PROGRAMS } from './programs';

const log = (line: string) => process.stderr.write(`[klutch-kit] ${line}\n`);

const STEPS: readonly (readonly [string, () => Promise<unknown>])[] = [
  ['Kubernetes (etcd, control plane, node, kubectl)', () => ensureKubeBinary()],
  ['crank v1', async () => (await ensureCrank('v1'), ensureValidateCache('v1'))],
  ['crank v2 and Crossplane core v2', async () => (await ensureCrank('v2'), ensureValidateCache('v2'), await ensureCrossplane(log, 'v2'))],
  ['Crossplane core v1', () => ensureCrossplane(log, 'v1')],
  ['provider-kubernetes', () => ensureProviderKubernetes(log)],
  ['CloudNativePG manager', () => ensureCnpgManager(log)],
  ['CoreDNS', () => ensureCoreDns(log)],
  ['kube-network-policies', () => ensureNetworkPolicies(log)],
  ['helm', () => ensureHelm(log)],
  ['promtool', () => ensurePromtool(log)],
  ['krew', () => ensureKrew(log)],
  ['versitygw (the object store)', () => ensureVersitygw(log)],
  ["syft (the release's SBOMs)", () => ensureSyft(log)],
];

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(
      'usage: npm run tools [-- --debian]\n\nBuilds every Go tool the tests, the sandbox and the benches use into the cache ' +
        '($KLUTCH_KIT_CACHE, else ~/.cache/klutch-kit), printing the time of each.\n  --debian  first install the Debian packages of every program the harness runs\n',
    );
    return;
  }
  const rows: [string, number][] = [];
  const timed = async (label: string, f: () => Promise<unknown>) => {
    const started = Date.now();
    await f();
    rows.push([label, (Date.now() - started) / 1000]);
    log(`${label}: ${rows.at(-1)![1].toFixed(1)}s`);
  };
  if (argv.includes('--debian')) await timed('Debian packages', () => ensurePrograms(Object.keys(PROGRAMS) as ProgramName[], log));
  for (const [label, f] of STEPS) await timed(label, f);
  const total = rows.reduce((s, [, t]) => s + t, 0);
  process.stdout.write(
    `${rows.map(([l, t]) => `${t.toFixed(1).padStart(8)}s  ${l}`).join('\n')}\n${total.toFixed(1).padStart(8)}s  in all\n`,
  );
}

main(process.argv.slice(2)).catch((e: unknown) => {
  log(`failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
