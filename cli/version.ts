/** `kubectl bind version`: the plugin's version and the konnector it installs (they are released together). */
import { DEFAULT_KONNECTOR_IMAGE } from '../konnector/deploy/konnector';
import { KONNECTOR_VERSION } from '../konnector/version';

/** The plugin's version: that of the konnector it installs. */
export const PLUGIN_VERSION = KONNECTOR_VERSION;

export function versionText(): string {
  return `kubectl-bind ${PLUGIN_VERSION}\nkonnector image it installs: ${DEFAULT_KONNECTOR_IMAGE}\n`;
}
