/**
 * How Crossplane runs our function: a DeploymentRuntimeConfig whose Pod passes the Pod Security `restricted` profile
 * (Crossplane's default runtime sets a non-root user but no seccomp profile and keeps all capabilities), the
 * Function object that installs our package with it, and a NetworkPolicy fencing its Pods. Apply them before the
 * Configuration: its dependency on the function is then already met by this Function, so Crossplane does not install
 * one with the `default` runtime.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

/** The distroless image's `nonroot` user and group (the Dockerfile's USER, synth/deployables.ts IMAGE_USER). */
const FUNCTION_USER = 65532;
/** Crossplane's name for the function's container in the runtime Deployment. */
export const RUNTIME_CONTAINER = 'package-runtime';
/** The ports Crossplane gives a function's container (internal/controller/pkg/runtime: GRPCPort, MetricsPortNumber). */
export const FUNCTION_GRPC_PORT = 9443;
export const FUNCTION_METRICS_PORT = 8080;
/** The labels of Crossplane core's Pods in its Helm chart (`app: {{ crossplane.name }}`): the function's only caller. */
const CROSSPLANE_CORE_PODS: Readonly<Record<string, string>> = { app: 'crossplane' };

interface SeccompProfile {
  readonly type: 'RuntimeDefault' | 'Localhost';
}

export interface PodSecurityContext {
  readonly runAsNonRoot: boolean;
  readonly runAsUser: number;
  readonly runAsGroup: number;
  readonly seccompProfile: SeccompProfile;
}

export interface ContainerSecurityContext extends PodSecurityContext {
  readonly privileged: false;
  readonly allowPrivilegeEscalation: false;
  readonly readOnlyRootFilesystem: boolean;
  readonly capabilities: { readonly drop: readonly 'ALL'[] };
}

/** The part of a Pod template a DeploymentRuntimeConfig sets; Crossplane fills in image, ports and TLS volumes. */
export interface RuntimePodSpec {
  readonly automountServiceAccountToken: boolean;
  readonly securityContext: PodSecurityContext;
  readonly containers: readonly { readonly name: string; readonly securityContext: ContainerSecurityContext }[];
}

const SECCOMP: SeccompProfile = { type: 'RuntimeDefault' };

/** The runtime Pod of the function: restricted, and without an API token (it never calls the API server). */
export const FUNCTION_POD: RuntimePodSpec = {
  automountServiceAccountToken: false,
  securityContext: { runAsNonRoot: true, runAsUser: FUNCTION_USER, runAsGroup: FUNCTION_USER, seccompProfile: SECCOMP },
  containers: [
    {
      name: RUNTIME_CONTAINER,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: FUNCTION_USER,
        runAsGroup: FUNCTION_USER,
        seccompProfile: SECCOMP,
        privileged: false,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      },
    },
  ],
};

export interface FunctionRuntimeProps {
  /**
   * The package to install and the name Crossplane gives it (compositions/function-ref.ts `functionPackage`, which
   * functions/ may not import: its name and reference are all this construct reads).
   */
  readonly fn: { readonly name: string; readonly ref: string };
  /** Where Crossplane runs, and with it the function's Pods. @default crossplane-system */
  readonly namespace?: string;
  /** Labels of Crossplane core's Pods there, which call the function. @default CROSSPLANE_CORE_PODS */
  readonly crossplanePods?: Readonly<Record<string, string>>;
  /** The namespace whose Pods may scrape the function's metrics port. @default none (kubelet probes only) */
  readonly monitoringNamespace?: string;
}

/** DeploymentRuntimeConfig `<function name>`, Function `<function name>` using it, and NetworkPolicy `<function name>`. */
export class FunctionRuntime extends Construct {
  readonly name: string;

  constructor(scope: Construct, id: string, props: FunctionRuntimeProps) {
    super(scope, id);
    this.name = props.fn.name;
    const namespace = props.namespace ?? 'crossplane-system';
    const crossplanePods = props.crossplanePods ?? CROSSPLANE_CORE_PODS;
    const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
    if (props.monitoringNamespace !== undefined && !label.test(props.monitoringNamespace))
      throw new Error(`FunctionRuntime ${id}: monitoringNamespace: "${props.monitoringNamespace}" is not a DNS label`);
    if (!label.test(namespace)) throw new Error(`FunctionRuntime ${id}: namespace: "${namespace}" is not a DNS label`);
    if (Object.keys(crossplanePods).length === 0)
      throw new Error(`FunctionRuntime ${id}: crossplanePods: is empty, which would admit every Pod of ${namespace}`);
    new ApiObject(this, 'RuntimeConfig', {
      apiVersion: 'pkg.crossplane.io/v1beta1',
      kind: 'DeploymentRuntimeConfig',
      metadata: { name: this.name },
      // `selector` and `template` are required by the CRD; Crossplane sets the selector itself.
      spec: { deploymentTemplate: { spec: { selector: {}, template: { spec: FUNCTION_POD } } } },
    });
    new ApiObject(this, 'Function', {
      apiVersion: 'pkg.crossplane.io/v1',
      kind: 'Function',
      metadata: { name: this.name },
      spec: {
        package: props.fn.ref,
        runtimeConfigRef: { apiVersion: 'pkg.crossplane.io/v1beta1', kind: 'DeploymentRuntimeConfig', name: this.name },
      },
    });
    // The function reads tenants' claims and never calls out (no API token, no client): its Pods take gRPC only from
    // Crossplane core, metrics only from the monitoring namespace, and open no connection. The kubelet's probes come
    // from the node, which most CNIs let through regardless of NetworkPolicy, so they need no rule.
    const tcp = (port: number) => [{ protocol: 'TCP', port }];
    new ApiObject(this, 'NetworkPolicy', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: this.name, namespace },
      spec: {
        // Crossplane labels the Pods of a Function's revisions with its name (as the PodMonitor selects them).
        podSelector: { matchLabels: { 'pkg.crossplane.io/function': this.name } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          { from: [{ podSelector: { matchLabels: { ...crossplanePods } } }], ports: tcp(FUNCTION_GRPC_PORT) },
          ...(props.monitoringNamespace
            ? [
                {
                  from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': props.monitoringNamespace } } }],
                  ports: tcp(FUNCTION_METRICS_PORT),
                },
              ]
            : []),
        ],
      },
    });
  }
}
