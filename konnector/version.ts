/**
 * The konnector's version, reported in every ClusterBinding's heartbeat (`konnectorVersion`): the package version
 * (version.test.ts keeps the two equal; the layout rules keep package.json out of shipped imports).
 */
export const KONNECTOR_VERSION = 'v0.1.0';
