/** The Configuration package's `crossplane.yaml`: metadata, Crossplane version constraint and dependencies. */
import { Construct } from 'constructs';
import { parseDocument, visit } from 'yaml';
import type { CrossplaneTarget } from '../apis/api';
import type { FunctionPackage } from '../compositions/function-ref';
import { Configuration } from '../imports/meta.pkg.crossplane.io';
import { packageAnnotations } from '../lib/version';

/** A package this one depends on, with a semver constraint. */
export interface PackageDependency {
  readonly package: string;
  readonly version: string;
}

export interface ConfigurationMetaProps {
  readonly name: string;
  readonly target: CrossplaneTarget;
  readonly fn: FunctionPackage;
  readonly providerAnynines: PackageDependency;
  readonly providerKubernetes: PackageDependency;
}

/**
 * The function versions the Configuration takes: from its own tag up to the next major, whose request or input may
 * differ; any version for a digest reference (no tag to start from).
 */
function functionRange(tag: string): string {
  const major = /^v(\d+)\.\d+\.\d+/.exec(tag)?.[1];
  if (major === undefined) return tag ? `>=${tag}` : '>=v0.0.0';
  return `>=${tag}, <v${Number(major) + 1}.0.0`;
}

export class ConfigurationMeta extends Construct {
  constructor(scope: Construct, id: string, props: ConfigurationMetaProps) {
    super(scope, id);
    new Configuration(this, 'Resource', {
      metadata: {
        name: props.name,
        annotations: packageAnnotations(
          'Data-service APIs (PostgreSQL, MariaDB, RabbitMQ, MongoDB, OpenSearch, Prometheus, LogMe, Valkey) for the a9s, a8s and CloudNativePG (cnpg) backends.',
        ),
      },
      spec: {
        // v1 XRDs with claims run on 1.17+ and, as LegacyCluster, on 2.x; v2 XRDs need 2.x.
        crossplane: { version: props.target === 'v1' ? '>=v1.17.1' : '>=v2.0.0' },
        // The legacy `provider`/`function` keys: the `apiVersion`/`kind`/`package` form needs Crossplane 1.19.
        dependsOn: [
          { provider: props.providerAnynines.package, version: props.providerAnynines.version },
          { provider: props.providerKubernetes.package, version: props.providerKubernetes.version },
          { function: props.fn.repository, version: functionRange(props.fn.tag) },
        ],
      },
    });
  }
}

/**
 * A package's crossplane.yaml with its dependency on `repository` (a `function`, `provider` or `configuration` entry,
 * or a `package` one) pinned to `digest`: Crossplane (1.20 and 2.x) installs exactly that package for it. Fails when
 * there is no such dependency: a release that pins nothing must not pass for one that does.
 */
export function pinDependency(crossplaneYaml: string, repository: string, digest: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${repository}: "${digest}" is not a sha256 digest`);
  const doc = parseDocument(crossplaneYaml);
  let found = false;
  visit(doc, {
    Map(_, node) {
      const names = ['function', 'provider', 'configuration', 'package'].map((k) => node.get(k));
      if (!names.includes(repository) || !node.has('version')) return;
      node.set('version', digest);
      found = true;
    },
  });
  if (!found) throw new Error(`the package's crossplane.yaml has no dependency on ${repository} to pin`);
  return doc.toString({ lineWidth: 0 });
}
