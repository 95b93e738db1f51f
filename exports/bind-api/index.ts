/**
 * The Klutch bind API (klutch.anynines.com/v1alpha1 and the example backend's APIServiceExportTemplate) as types,
 * schemas and CRDs, shared by the bind backend, the konnector and the CLI.
 */
import { apiServiceBindingCrd } from './apiservice-binding';
import { apiServiceExportCrd } from './apiservice-export';
import { apiServiceExportRequestCrd } from './apiservice-export-request';
import { apiServiceExportTemplateCrd } from './apiservice-export-template';
import { apiServiceNamespaceCrd } from './apiservice-namespace';
import { appClusterBindingCrd } from './app-cluster-binding';
import { clusterBindingCrd } from './cluster-binding';

export * from './apiservice-binding';
export * from './apiservice-export';
export * from './apiservice-export-request';
export * from './apiservice-export-template';
export * from './apiservice-namespace';
export * from './app-cluster-binding';
export * from './cluster-binding';
export * from './common';
export * from './client';
export * from './conditions';
export * from './constants';
export * from './container';
export * from './crd-version';
export * from './permission-claim';
export * from './provider-kubeconfig';

/** Every bind CRD, in the fixed order of `Kinds`, so files and diffs written from the list stay stable. */
export function bindApiCrds(): Record<string, unknown>[] {
  return [
    apiServiceExportCrd(),
    apiServiceExportRequestCrd(),
    apiServiceNamespaceCrd(),
    apiServiceBindingCrd(),
    clusterBindingCrd(),
    appClusterBindingCrd(),
    apiServiceExportTemplateCrd(),
  ];
}
export * from './documents';
