/**
 * kube-scheduler (a mode of harness/tools/kube). It only talks to the API server, so it runs on the host beside the control
 * plane, with the admin kubeconfig, rather than in the node's namespaces.
 */
import { launch, type Proc } from '../cluster/processes';

export function startScheduler(binary: string, kubeconfig: string, dir: string, owner: string): Proc {
  return launch({
    command: binary,
    args: ['kube-scheduler', `--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--bind-address=127.0.0.1', '--secure-port=0', '--v=2'],
    role: 'kube-scheduler',
    owner,
    logDir: dir,
    env: { ...process.env, KUBE_EXIT_WITH_PARENT: '1' },
  });
}
