/** `--help` of every command; the flags' lines come from each command's flag table (cli/flags.ts). */
import { flagHelp, HELP_FLAG } from '../lib/flags';
import { APISERVICE_FLAGS, BIND_FLAGS, CLUSTER_FLAGS, LIST_FLAGS, LOGIN_FLAGS, MACHINE_FLAGS, REMOVE_FLAGS, WHY_FLAGS } from './flags';

const EXIT_CODES = `Exit codes:
  0    done
  1    something failed (the message says what, and what to do)
  2    wrong command line
  3    timed out (login, export request, binding, removal)
  4    declined (a required permission claim rejected, a removal not confirmed)
  130  interrupted (Ctrl-C)
`;

export const HELP: Record<string, string> = {
  '': `kubectl bind: bind APIs of a Klutch control plane into this (app) cluster.

Usage:
  kubectl bind <url> [flags]                       log in at a bind backend and bind the API you pick
  kubectl bind <url> --client-id ID --client-secret-file FILE --oidc-issuer URL --api RESOURCE.GROUP [flags]
                                                   the same for a machine identity (CI), without a browser
  kubectl bind apiservice -f <request.yaml> [flags]  bind with an export request you already have
  kubectl bind list [flags]                        the bindings of this cluster
  kubectl bind remove <binding> [flags]            unbind: deletes the API's objects here and on the provider
  kubectl bind why <resource>/<name> [flags]       why a claim is not Ready: each hop, and the one that holds it
  kubectl bind version                             the plugin's version (also --version)

<url> is the bind backend's /export address, e.g. https://bind.example.com/export.

Also installed as kubectl klutch-bind (krew: klutch-bind), beside kube-bind's kubectl bind.
Shell completion (kubectl 1.26+): put on PATH an executable kubectl_complete-bind that runs
  kubectl-bind __complete "$@"
(kubectl_complete-klutch_bind running kubectl-klutch_bind __complete "$@" for the second name).

Flags:
${flagHelp([...CLUSTER_FLAGS, ...BIND_FLAGS, ...LOGIN_FLAGS])}
${HELP_FLAG}; \`kubectl bind <command> --help\` for a command's

Machine identity (CI, GitOps; the backend must run with --machine-bind), instead of a browser login:
${flagHelp(MACHINE_FLAGS)}

What it does: fetches the provider's BindingProvider, ensures the namespace, prints the login URL (and opens your
browser where this machine has one), waits for the login with a countdown, stores the provider's kubeconfig in a
Secret kubeconfig-* (one per provider and cluster namespace, reused), creates the APIServiceExportRequest on the
provider and waits for it, installs or upgrades the konnector, asks about each permission claim, creates the
APIServiceBinding <resource>.<group> and prints what is bound and how to create a first claim.

${EXIT_CODES}`,
  apiservice: `kubectl bind apiservice: bind the APIs of an APIServiceExportRequest, as Klutch's CLI does after a login.

Usage:
  kubectl bind apiservice -f <request.yaml> --remote-kubeconfig-name <secret> [flags]
  kubectl bind apiservice -f <request.yaml> --remote-kubeconfig <file> [flags]

Flags:
${flagHelp([...APISERVICE_FLAGS, ...CLUSTER_FLAGS, ...BIND_FLAGS])}
${HELP_FLAG}

${EXIT_CODES}`,
  list: `kubectl bind list: the APIServiceBindings of this cluster, whether they are Ready and how many objects each holds.

Usage:
  kubectl bind list [flags]

Flags:
${flagHelp([...CLUSTER_FLAGS, ...LIST_FLAGS])}
${HELP_FLAG}

${EXIT_CODES}`,
  remove: `kubectl bind remove: unbind an API. The konnector deletes every object of the API in this cluster, waits until
each copy on the provider is gone (no claim is stranded), deletes the API's CRD and releases the binding; then its
access grant and, if no other binding uses it, the provider kubeconfig Secret are removed.

Usage:
  kubectl bind remove <binding> [flags]     <binding> is <resource>.<group>, as \`kubectl bind list\` shows

Flags:
${flagHelp([...CLUSTER_FLAGS, ...REMOVE_FLAGS])}
${HELP_FLAG}

${EXIT_CODES}`,
  why: `kubectl bind why: why a claim in this cluster is not Ready, hop by hop: the APIServiceBinding that serves its API,
the konnector that carries it (its Lease, its Pods), and the claim's conditions as the control plane sent them back
(Crossplane's Synced, DataServiceReady in the backend's words, what else the backend reports); the last line names
the hop that holds it and what to do.

Usage:
  kubectl bind why <resource>/<name> [flags]   <resource> as kubectl takes it: postgresqlinstance, its plural,
                                               its kind, or <plural>.<group>; also kubectl bind why <resource> <name>

Flags:
${flagHelp(WHY_FLAGS)}
${HELP_FLAG}

${EXIT_CODES}`,
};
