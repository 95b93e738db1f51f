/** `npm run sandbox`'s flags: one table (lib/flags.ts) for parsing and --help, checked against the README's table. */
import { flagHelp, HELP_FLAG, parseFlags, UsageError, type FlagTable } from '../lib/flags';
import { APP, CONTROL_PLANE } from './sandbox';

export const SANDBOX_FLAGS: FlagTable = {
  flags: [
    {
      name: 'dir',
      arg: 'dir',
      default: '.sandbox/',
      help: 'logs, synth output and kubeconfigs (in the repository; emptied first)',
    },
    {
      name: 'short',
      boolean: true,
      default: 'false',
      help: 'stop after the round trip instead of waiting for Ctrl-C (for scripts)',
    },
    {
      name: 'skip-backup',
      boolean: true,
      default: 'false',
      help: 'leave out the last two steps: a Backup claim of the cnpg instance, and a new instance restored from its backups',
    },
    { name: 'user', arg: 'name', default: 'developer', help: 'who logs in at the OpenID provider' },
    {
      name: 'crossplane',
      arg: 'v1|v2',
      default: 'v1',
      help: "the package on Crossplane v2 core: v1, Klutch's claims, or v2, the v2-native package (namespaced composites; the app cluster's claims become them)",
    },
  ],
};

export const SANDBOX_HELP = `npm run sandbox [-- options]

Starts two Kubernetes clusters ("${CONTROL_PLANE}" and "${APP}"), each with a node that runs Pods; on the control
plane a registry, Crossplane from its Helm chart with our packages, the install bundle (the bind backend as Pods) and
CloudNativePG; binds the app cluster with kubectl bind (the konnector as Pods), sends an a8s and a cnpg
PostgresqlInstance with their ServiceBindings from the app cluster through the control plane and back, and queries
the cnpg database from a Pod in the app cluster; then backs the cnpg instance up with a Backup claim from the app
cluster, restores its backups into a new instance and reads the row back there. Keeps running until Ctrl-C.

Options:
${flagHelp(SANDBOX_FLAGS)}
${HELP_FLAG}
`;

export interface SandboxFlags {
  readonly dir?: string;
  readonly short: boolean;
  readonly skipBackup: boolean;
  readonly user?: string;
  readonly crossplane?: 'v1' | 'v2';
}

/** Parses the sandbox's command line; throws UsageError naming the flag. */
export function parseSandboxFlags(argv: readonly string[]): SandboxFlags | 'help' {
  const f = parseFlags(SANDBOX_FLAGS, argv);
  if (f.help) return 'help';
  const crossplane = f.value('crossplane');
  if (crossplane !== undefined && crossplane !== 'v1' && crossplane !== 'v2')
    throw new UsageError(`--crossplane must be v1 or v2, not "${crossplane}"`);
  return {
    ...(f.value('dir') ? { dir: f.value('dir') } : {}),
    short: f.value('short') === 'true',
    skipBackup: f.value('skip-backup') === 'true',
    ...(f.value('user') ? { user: f.value('user') } : {}),
    ...(crossplane ? { crossplane } : {}),
  };
}
