/**
 * How Crossplane runs our function: a DeploymentRuntimeConfig whose Pod passes the Pod Security `restricted` profile
 * (Crossplane's default runtime sets a non-root user but no seccomp profile and keeps all capabilities), and the
 * Function object that installs our package with it. Apply both before the Configuration: its dependency on the
 * function is then already met by this Function, so Crossplane does not install one with the `default` runtime.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

/** The distroless image's `nonroot` user and group (the Dockerfile's USER, synth/deployables.ts IMAGE_USER). */
export const FUNCTION_USER = 65532;
/** Crossplane's name for the function's container in the runtime Deployment. */
export const RUNTIME_CONTAINER = 'package-runtime';

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
}

/** DeploymentRuntimeConfig `<function name>` and Function `<function name>` using it. */
export class FunctionRuntime extends Construct {
  readonly name: string;

  constructor(scope: Construct, id: string, props: FunctionRuntimeProps) {
    super(scope, id);
    this.name = props.fn.name;
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
  }
}
