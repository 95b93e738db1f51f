/** `--help` of every command (the README's "kubectl bind" section says the same). */

const EXIT_CODES = `Exit codes:
  0    done
  1    something failed (the message says what, and what to do)
  2    wrong command line
  3    timed out (login, export request, binding, removal)
  4    declined (a required permission claim rejected, a removal not confirmed)
  130  interrupted (Ctrl-C)
`;

const CLUSTER_FLAGS = `      --kubeconfig FILE            the app cluster's kubeconfig (default: $KUBECONFIG, else ~/.kube/config)
      --context NAME               a context of that kubeconfig (default: its current context)
  -n, --namespace NS               namespace of the konnector, the kubeconfig Secrets and the bindings
                                   (default klutch-bind; any other serves only its own bindings)`;

const BIND_FLAGS = `      --skip-konnector             do not install or upgrade the konnector (nor grant it access)
      --konnector-image IMAGE      the konnector image to install (default ghcr.io/klutch-kit/konnector:v0.1.0)
      --downgrade-konnector        replace a newer konnector with this kubectl-bind's
      --accept-permission-claims   accept every permission claim without asking (for scripts)
  -d, --dry-run                    print what would be created, create nothing
  -o, --output yaml|json           format of --dry-run (default yaml)
      --timeout DURATION           wait this long for the provider to export the API (default 10m)
      --wait DURATION              wait this long for the konnector to report the binding Ready (default 2m; 0: do not wait)`;

export const HELP: Record<string, string> = {
  '': `kubectl bind: bind APIs of a Klutch control plane into this (app) cluster.

Usage:
  kubectl bind <url> [flags]                       log in at a bind backend and bind the API you pick
  kubectl bind <url> --client-id ID --client-secret-file FILE --api RESOURCE.GROUP [flags]
                                                   the same for a machine identity (CI), without a browser
  kubectl bind apiservice -f <request.yaml> [flags]  bind with an export request you already have
  kubectl bind list [flags]                        the bindings of this cluster
  kubectl bind remove <binding> [flags]            unbind: deletes the API's objects here and on the provider
  kubectl bind version                             the plugin's version (also --version)

<url> is the bind backend's /export address, e.g. https://bind.example.com/export.

Flags:
${CLUSTER_FLAGS}
${BIND_FLAGS}
      --login-timeout DURATION     wait this long for the login in the browser (default 10m)
      --no-browser                 only print the login URL, do not open a browser
  -h, --help                       this help; \`kubectl bind <command> --help\` for a command's

Machine identity (CI, GitOps; the backend must run with --machine-bind), instead of a browser login:
      --client-id ID               bind as this OAuth2 client (client-credentials grant at the backend's OpenID provider)
      --client-secret-file FILE    read its secret from FILE (one trailing newline is dropped)
      --client-secret-env VAR      read its secret from the environment variable VAR
                                   (there is no --client-secret: the command line is readable by every user)
      --api RESOURCE.GROUP         an API to bind, e.g. postgresqlinstances.anynines.com (repeatable)
  -f, --file FILE                  bind the APIs of these APIServiceExportRequest(s) (the file apiservice -f takes)
      --oidc-issuer URL            the OpenID provider you expect: a backend naming another is refused before the
                                   secret is sent

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
  -f, --file FILE                        the APIServiceExportRequest(s), YAML or JSON ('-' for stdin)
      --remote-kubeconfig-name NAME      Secret in the app cluster holding the provider kubeconfig (key kubeconfig)
      --remote-kubeconfig-namespace NS   its namespace (default: --namespace)
      --remote-kubeconfig FILE           the provider kubeconfig as a file instead (stored as a Secret kubeconfig-*)
      --remote-namespace NS              the consumer's namespace on the provider (default: the kubeconfig context's)
${CLUSTER_FLAGS}
${BIND_FLAGS}
  -h, --help                             this help

${EXIT_CODES}`,
  list: `kubectl bind list: the APIServiceBindings of this cluster, whether they are Ready and how many objects each holds.

Usage:
  kubectl bind list [flags]

Flags:
${CLUSTER_FLAGS}
  -A, --all-namespaces             bindings of every namespace
  -o, --output yaml|json           print the bindings themselves
  -h, --help                       this help

${EXIT_CODES}`,
  remove: `kubectl bind remove: unbind an API. The konnector deletes every object of the API in this cluster, waits until
each copy on the provider is gone (no claim is stranded), deletes the API's CRD and releases the binding; then its
access grant and, if no other binding uses it, the provider kubeconfig Secret are removed.

Usage:
  kubectl bind remove <binding> [flags]     <binding> is <resource>.<group>, as \`kubectl bind list\` shows

Flags:
${CLUSTER_FLAGS}
  -y, --yes                        do not ask for confirmation (needed when stdin is not a terminal)
      --timeout DURATION           wait this long for the objects to go (default 10m)
  -h, --help                       this help

${EXIT_CODES}`,
};
