import { bundleDeployable, deployable } from '../../synth/deployables';
import { launch, type Proc } from '../cluster/processes';
import { repoRoot } from '../root';

/** What a Deployment's container is given: its command line and its environment, nothing of the suite's. */
export interface BundleLaunch {
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly logDir: string;
  readonly role: string;
}

/**
 * A deployable's bundle (synth/deployables.ts) with exactly `args` and `env` (not even process.env): a Deployment's
 * command line as a process. Not waited for; it may be meant to exit. `setpriv --pdeathsig` ends it with the runner.
 */
export async function launchBundle(name: string, o: BundleLaunch, deathSignal: 'TERM' | 'KILL'): Promise<Proc> {
  const bundle = await bundleDeployable(repoRoot(), deployable(name));
  return launch({
    command: 'setpriv',
    args: ['--pdeathsig', deathSignal, process.execPath, bundle, ...o.args],
    role: o.role,
    owner: o.role,
    logDir: o.logDir,
    env: o.env,
  });
}
