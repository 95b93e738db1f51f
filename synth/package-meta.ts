/** The Configuration package's `crossplane.yaml`: metadata, Crossplane version constraint and dependencies. */
import { Construct } from 'constructs';
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
