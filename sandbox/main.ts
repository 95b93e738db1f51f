/**
 * `npm run sandbox`: the platform on this machine, on Pods (sandbox/sandbox.ts), every step printed with its timing; then the
 * kubeconfigs and what to try, and it keeps running until Ctrl-C, which stops everything. Unless `--skip-backup`, a
 * Backup claim of the cnpg instance and a restore of it into a new instance follow the round trip. `--short` stops
 * right after them (for scripts).
 */
import { join, relative } from 'node:path';
import { repoRoot } from '../harness/root';
import { SANDBOX_HELP, parseSandboxFlags, type SandboxFlags } from './flags';
import { startSandbox, type Sandbox } from './sandbox';
import { seconds, Steps } from './steps';

let values: SandboxFlags;
try {
  const parsed = parseSandboxFlags(process.argv.slice(2));
  if (parsed === 'help') {
    process.stdout.write(SANDBOX_HELP);
    process.exit(0);
  }
  values = parsed;
} catch (e) {
  process.stderr.write(`sandbox: ${(e as Error).message}\n\n${SANDBOX_HELP}`);
  process.exit(2);
}

const dir = values.dir ?? join(repoRoot(), '.sandbox');
const interrupt = new AbortController();
const steps = new Steps((t) => process.stdout.write(t), interrupt.signal);
// Every harness process registers an exit handler.
process.setMaxListeners(100);
const show = (p: string) => (relative(process.cwd(), p).startsWith('..') ? p : relative(process.cwd(), p));

let sandbox: Sandbox | undefined;
let interrupted = false;
const stopAll = async (why: string, code: number): Promise<never> => {
  process.stdout.write(`\n${why}: stopping everything ...\n`);
  const t = Date.now();
  await sandbox?.stop();
  process.stdout.write(`stopped in ${seconds(Date.now() - t)}; nothing is left running. Logs stay in ${show(dir)}/\n`);
  process.exit(code);
};
process.once('SIGINT', () => {
  interrupted = true;
  // A second Ctrl-C ends at once; every process started has a parent-death signal and follows.
  process.once('SIGINT', () => process.exit(130));
  if (sandbox) void stopAll('Ctrl-C', 0);
  else {
    process.stdout.write('\nCtrl-C: stopping what has started ...\n');
    interrupt.abort();
  }
});
process.once('SIGTERM', () => void (sandbox ? stopAll('SIGTERM', 0) : process.exit(143)));

process.stdout.write(`klutch-kit sandbox: the platform on this machine (logs and kubeconfigs in ${show(dir)}/)\n`);
try {
  sandbox = await startSandbox({
    dir,
    steps,
    ...(values.user ? { user: values.user } : {}),
    ...(values.crossplane ? { crossplane: values.crossplane } : {}),
  });
} catch (e) {
  // startSandbox stopped what it had started.
  if (interrupted) {
    process.stdout.write(`stopped; nothing is left running. Logs stay in ${show(dir)}/\n`);
    process.exit(130);
  }
  process.stderr.write(`\nsandbox: ${e instanceof Error ? e.message : String(e)}\n  logs: ${show(dir)}/\n`);
  process.exit(1);
}
if (interrupted) await stopAll('Ctrl-C', 130);

// Backups and restores, as an app team takes them, once the round trip has written its row (sandbox/backups.ts).
let restored: Awaited<ReturnType<Sandbox['restore']>> | undefined;
if (!values.skipBackup && sandbox.claims.cnpg) {
  try {
    await sandbox.backup();
    restored = await sandbox.restore();
  } catch (e) {
    if (interrupted) await stopAll('Ctrl-C', 130);
    process.stderr.write(`\nsandbox: ${e instanceof Error ? e.message : String(e)}\n  logs: ${show(dir)}/\n`);
    await stopAll('the backup and restore failed', 1);
  }
  if (interrupted) await stopAll('Ctrl-C', 130);
}

const k = sandbox.kubeconfigs;
const cnpg = sandbox.claims.cnpg;
process.stdout.write(`
The round trip is done (${steps.total()} in all):
${steps.timings.map((t, i) => `  [${i + 1}] ${seconds(t.ms).padStart(7)}  ${t.step}`).join('\n')}
${
  sandbox.query && cnpg
    ? `
PostgreSQL answered a Pod of the app cluster, through the credentials in Secret default/${cnpg.binding}-creds:
${sandbox.query.map((l) => `  ${l}`).join('\n')}
`
    : ''
}${
  restored
    ? `
Restored from its backups into ${restored.instance}, the row read back through Secret default/${restored.binding}-creds:
${restored.query.map((l) => `  ${l}`).join('\n')}
`
    : ''
}
Use the clusters with kubectl:
  export KUBECONFIG=${show(k.app)}             # the app cluster
  kubectl get pods -A
  kubectl get postgresqlinstances,servicebindings,backups -n default
  kubectl get secret ${sandbox.claims.binding}-creds -n default -o jsonpath='{.data}'
  kubectl bind list

  kubectl --kubeconfig ${show(k.controlPlane)} get pods -A                      # the control plane
  kubectl --kubeconfig ${show(k.controlPlane)} get claim,composite,managed -A
  kubectl --kubeconfig ${show(k.controlPlane)} get postgresqls,clusters.postgresql.cnpg.io -n ${sandbox.claims.providerNamespace}

The OpenID provider's login page (${sandbox.oidcIssuer}) lives inside the control plane's node, where only the
sandbox's headless browser is routed: a browser of this machine cannot open it, so bind more APIs by restarting the
sandbox (or through the tests' Sandbox.bind).
`);
if (values.short) await stopAll('--short', 0);
process.stdout.write('\nRunning. Ctrl-C stops everything.\n');
// Kept alive by the processes' handles until Ctrl-C.
setInterval(() => {}, 1 << 30);
