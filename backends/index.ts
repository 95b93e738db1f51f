/**
 * The backends: one module each, producing recipe data (recipe/) for the catalog — which resource, how it is
 * wrapped, which fields the platform adds, where status and failure are read, where credentials come from. The
 * function knows none of them. A new backend is a new module here plus the catalog entries that use it.
 */
export * from './a8s';
export * from './a9s';
export * from './kubernetes-object';
