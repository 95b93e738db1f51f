/** The leader's controllers, run together on the leader's informers until leadership (or the process) ends. */
import { runWithInformers, type Controller } from '../../controller';
import { runAppClusterBindings } from '../app-cluster-binding/app-cluster-binding.controller';
import { leaderInformers, ObjectInformers } from '../informers';
import { claimedAccessController } from './claimed-access.controller';
import { clusterBindingsController } from './cluster-binding.controller';
import { clusterBindingHealth } from './cluster-binding.metrics';
import { consumerLifecycleController } from './consumer-lifecycle.controller';
import { consumerRbacController } from './consumer-rbac.controller';
import { ours, type ControllerDeps } from './deps';
import { exportRequestsController } from './export-request.controller';
import { exportsController } from './export.controller';
import { klutchAdoptionController } from './klutch-adoption.controller';
import { kubeconfigRotationController } from './kubeconfig-rotation.controller';
import { serviceNamespacesController } from './service-namespace.controller';
import { backupSweepController } from './backup-sweep.controller';

export type { ControllerDeps } from './deps';

/** Starts the leader informers and every controller; resolves once `signal` aborted and in-flight work finished. */
export async function runControllers(base: Omit<ControllerDeps, 'leader' | 'objects'>, signal: AbortSignal): Promise<void> {
  const leader = leaderInformers(base.clients, base.log);
  const objects = new ObjectInformers(base.clients, base.log);
  const d: ControllerDeps = { ...base, leader, objects };
  const controllers: Controller[] = [
    exportRequestsController(d),
    exportsController(d),
    consumerRbacController(d),
    claimedAccessController(d),
    consumerLifecycleController(d),
    serviceNamespacesController(d),
    clusterBindingsController(d),
    kubeconfigRotationController(d),
    klutchAdoptionController(d),
    ...(d.backupStore ? [backupSweepController(d, d.backupStore)] : []),
  ];
  const health = clusterBindingHealth(base.registry);
  await runWithInformers(
    {
      informers: Object.values(leader),
      controllers: [
        ...controllers,
        ...(d.provision
          ? [
              {
                // Its informers are its own: without the AppClusterBinding CRD (or RBAC for it) only it waits.
                run: (s: AbortSignal) =>
                  runAppClusterBindings(d, s).catch((e: unknown) =>
                    base.log.error({ err: e }, 'the AppClusterBinding controller stopped with an error'),
                  ),
              },
            ]
          : []),
      ],
      onSynced: () => {
        health.observe(() => leader.clusterBindings.list().filter((b) => ours(d, b.metadata.namespace)));
        base.log.info({ controllers: controllers.map((c) => c.name) }, 'leading: controllers running');
      },
      beforeStop: async () => {
        // Not leading: no verdicts (the next leader exports them).
        health.observe(undefined);
        await objects.stop();
      },
    },
    signal,
  );
}
