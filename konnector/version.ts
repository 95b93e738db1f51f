import { VERSION } from '../lib/version';

/** The konnector's version, reported in every ClusterBinding's heartbeat (`konnectorVersion`): the release's. */
export const KONNECTOR_VERSION = VERSION;
