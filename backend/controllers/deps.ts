/** What every backend controller gets: clients, the leader's informers, settings, logging and metrics. */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { LeaderInformers, ServingInformers } from '../informers';
import type { Clients } from '../kube';
import type { ConsumerScope } from '../options';
import type { KubeconfigTarget, TokenPolicy } from '../provision/kubeconfig';

export interface ControllerDeps {
  readonly clients: Clients;
  readonly serving: ServingInformers;
  readonly leader: LeaderInformers;
  readonly consumerScope: ConsumerScope;
  readonly target: KubeconfigTarget;
  readonly tokens: TokenPolicy;
  /** How long a request waits for its CRD. @default CRD_WAIT_MS (a minute, as Klutch) */
  readonly exportRequestTimeoutMs?: number;
  readonly log: Logger;
  readonly registry: Registry;
}
