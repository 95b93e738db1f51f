/** The konnector's version, reported in every ClusterBinding's heartbeat (`konnectorVersion`): the package version. */
import pkg from '../package.json';

export const KONNECTOR_VERSION = `v${pkg.version}`;
