/**
 * Installs or upgrades the konnector in the app cluster from the `Konnector` construct rendered in this process (the
 * same objects `npm run synth` writes to dist/app-cluster/konnector/), plus the `KonnectorApiAccess` of each API being
 * bound. Server-side apply under the field manager `kubectl-bind`, so a second bind changes only what differs.
 *
 * Like Klutch's CLI, it never replaces a newer konnector with an older one unless told to (`--downgrade-konnector`);
 * an image given with `--konnector-image` is the user's choice and is applied as given.
 */
import { loadYaml, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { App, Chart } from 'cdk8s';
import { BindResources, crdName } from '../exports/bind-api';
import { KonnectorApiAccess, type KonnectorApiAccessProps } from '../konnector/deploy/access';
import { DEFAULT_KONNECTOR_NAMESPACE, Konnector, KONNECTOR_NAME } from '../konnector/deploy/konnector';
import { KONNECTOR_IMAGE } from '../lib/version';
import { CliError, ExitCode, TimeoutError } from './errors';
import { messageOf, statusOf } from '../lib/kube-errors';
import { bindingsOf } from './binding';
import { KUBECTL_BIND_FIELD_MANAGER, getOrUndefined, isBusy, retryBusy, sleep, type Cluster } from './kube';
import { compareVersions, formatVersion, parseVersion } from '../lib/semver';

export type Grant = Omit<KonnectorApiAccessProps, 'namespace'>;
type Manifest = KubernetesObject & Record<string, unknown>;

export interface KonnectorInstallOptions {
  readonly namespace: string;
  /** `--konnector-image`. @default the construct's image */
  readonly image?: string;
  /** `--konnector-image-pull-secret`. @default the one the running Deployment pulls with, if any */
  readonly imagePullSecret?: string;
  /** APIs to grant access to. */
  readonly grants: readonly Grant[];
}

/**
 * The objects to apply: the konnector (Namespace, APIServiceBinding CRD, ServiceAccount, RBAC, Deployment) and the
 * grants. A konnector outside `klutch-bind` serves only the bindings of its own namespace, so several can share a
 * cluster (its `--binding-namespace`). That namespace is the app team's (kubectl bind made it, or it was there): it
 * gets neither our Namespace object (Pod Security `restricted` labels) nor a namespace-wide default-deny
 * NetworkPolicy, which would cut off the team's other workloads; the konnector's own Pods are fenced all the same.
 */
export function konnectorManifests(o: KonnectorInstallOptions & { readonly konnector: boolean }): Manifest[] {
  const chart = new Chart(new App(), 'kubectl-bind');
  if (o.konnector) {
    new Konnector(chart, 'konnector', {
      namespace: o.namespace,
      createNamespace: o.namespace === DEFAULT_KONNECTOR_NAMESPACE,
      ...(o.image ? { image: o.image } : {}),
      ...(o.imagePullSecret ? { imagePullSecret: o.imagePullSecret } : {}),
      apis: o.grants,
      ...(o.namespace !== DEFAULT_KONNECTOR_NAMESPACE ? { args: [`--binding-namespace=${o.namespace}`] } : {}),
    });
  } else {
    o.grants.forEach((g, i) => new KonnectorApiAccess(chart, `access-${i}`, { ...g, namespace: o.namespace }));
  }
  return chart.toJson() as Manifest[];
}

/**
 * The version of an image's tag, if it has one; a digest after the tag (`konnector:v0.2.0@sha256:...`, as a release's
 * pinned bundle names it) is not the tag, and a registry's port (`host:5000/konnector`) is not one either.
 */
export function imageVersion(image: string | undefined): ReturnType<typeof parseVersion> {
  const named = image?.replace(/@.*$/, '') ?? '';
  const colon = named.lastIndexOf(':');
  return parseVersion(colon > named.lastIndexOf('/') ? named.slice(colon + 1) : '');
}

export interface InstallResult {
  /** What happened to the konnector Deployment. */
  readonly konnector: 'installed' | 'upgraded' | 'replaced' | 'unchanged' | 'kept newer';
  readonly image: string;
}

export async function installKonnector(app: Cluster, o: KonnectorInstallOptions & { readonly downgrade: boolean }): Promise<InstallResult> {
  const wanted = o.image ?? KONNECTOR_IMAGE;
  const current = await getOrUndefined(
    app.objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: KONNECTOR_NAME, namespace: o.namespace } }),
  ).catch((e: unknown) => {
    throw new CliError(
      `cannot read the konnector Deployment ${o.namespace}/${KONNECTOR_NAME}: ${messageOf(e)}`,
      permissionsHint,
      ExitCode.Failed,
      { cause: e },
    );
  });
  const currentImage = (current as { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } } | undefined)?.spec?.template
    ?.spec?.containers?.[0]?.image;
  const have = imageVersion(currentImage);
  const want = imageVersion(wanted);
  const newer = !o.image && !o.downgrade && have && want && compareVersions(have, want) > 0;
  // A bind that leaves the pull secret out keeps the one the konnector pulls with: applying without it would drop it
  // (the field is ours), and the next Pod could no longer pull from the team's private mirror.
  const pulledWith = (current as { spec?: { template?: { spec?: { imagePullSecrets?: { name?: string }[] } } } } | undefined)?.spec
    ?.template?.spec?.imagePullSecrets?.[0]?.name;
  const imagePullSecret = o.imagePullSecret ?? pulledWith;
  const manifests = konnectorManifests({ ...o, ...(imagePullSecret ? { imagePullSecret } : {}), konnector: !newer });
  // spec.selector is immutable: a konnector Deployment that selects its Pods otherwise (Klutch's `app: konnector`, or
  // an older klutch-kit's construct-path label) is deleted and made anew. Its Pods go in the background; the Lease
  // keeps one leader while old and new overlap, and the claims stay where they are.
  const deployment = manifests.find((m) => m.kind === 'Deployment') as { spec: { selector: unknown } } | undefined;
  // As JSON: the client's typed model carries unset fields (matchExpressions) as undefined properties.
  const currentSelector = JSON.parse(JSON.stringify((current as { spec?: { selector?: unknown } } | undefined)?.spec?.selector ?? null));
  const replace = current !== undefined && deployment !== undefined && !isDeepStrictEqual(currentSelector, deployment.spec.selector);
  if (replace)
    await app.objects.delete(current!, undefined, undefined, undefined, undefined, 'Background').catch((e: unknown) => {
      if (statusOf(e) === 404) return;
      throw new CliError(
        `cannot replace the konnector Deployment ${o.namespace}/${KONNECTOR_NAME} (its selector differs): ${messageOf(e)}`,
        permissionsHint,
        ExitCode.Failed,
        { cause: e },
      );
    });
  for (const m of manifests) await apply(app, m);
  return {
    konnector: newer ? 'kept newer' : !current ? 'installed' : replace ? 'replaced' : currentImage === wanted ? 'unchanged' : 'upgraded',
    image: newer ? `${currentImage} (newer than this kubectl-bind's ${formatVersion(want)})` : wanted,
  };
}

const permissionsHint = 'kubectl bind installs the konnector and its RBAC: run it as a cluster admin of the app cluster';

async function apply(app: Cluster, m: Manifest): Promise<void> {
  try {
    // Through the client's own deserializer first: its serializer drops wire names such as x-kubernetes-preserve-unknown-fields.
    const object = loadYaml<KubernetesObject>(JSON.stringify(m));
    await retryBusy(() => app.objects.patch(object, undefined, undefined, KUBECTL_BIND_FIELD_MANAGER, true, PatchStrategy.ServerSideApply));
  } catch (e) {
    const where = `${m.kind} ${m.metadata?.namespace ? `${m.metadata.namespace}/` : ''}${m.metadata?.name}`;
    throw new CliError(
      `cannot apply ${where} of the konnector: ${messageOf(e)}`,
      statusOf(e) === 403 ? permissionsHint : undefined,
      ExitCode.Failed,
      { cause: e },
    );
  }
}

/** Waits until the app cluster serves APIServiceBindings (its CRD is applied by the konnector or by us). */
export async function awaitBindingsServed(app: Cluster, namespace: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await bindingsOf(app).list(namespace);
      return;
    } catch (e) {
      if (statusOf(e) !== 404 && !isBusy(e))
        throw new CliError(`cannot list APIServiceBindings: ${messageOf(e)}`, permissionsHint, ExitCode.Failed, { cause: e });
    }
    if (signal.aborted) throw new CliError('interrupted', undefined, ExitCode.Interrupted);
    if (Date.now() > deadline)
      throw new TimeoutError(
        `the app cluster does not serve ${crdName(BindResources.bindings)}`,
        'the konnector installs that CRD: install it (drop --skip-konnector) or check that it runs',
      );
    await sleep(250, signal);
  }
}
