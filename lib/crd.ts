/** The CustomResourceDefinition construct over `crdManifest` (lib/crd-manifest.ts, which runtime code imports). */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { crdManifest, type CrdProps } from './crd-manifest';

export { crdManifest, type CrdProps, type CrdVersion, type PrinterColumn } from './crd-manifest';

export class CustomResourceDefinition extends Construct {
  readonly name: string;

  constructor(scope: Construct, id: string, props: CrdProps) {
    super(scope, id);
    const { apiVersion, kind, metadata, ...rest } = crdManifest(props) as { apiVersion: string; kind: string; metadata: { name: string } };
    this.name = metadata.name;
    new ApiObject(this, 'Resource', { apiVersion, kind, metadata, ...rest });
  }
}
