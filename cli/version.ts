/** `kubectl bind version`: the plugin's version and the konnector it installs (they are released together). */
import { stringify } from 'yaml';
import { KONNECTOR_IMAGE } from '../lib/version';
import { KONNECTOR_VERSION } from '../konnector/version';

/** The plugin's version: that of the konnector it installs. */
export const PLUGIN_VERSION = KONNECTOR_VERSION;

/** The text, or (`kubectl bind version -o json|yaml`, as `kubectl version -o`) one document to read by a script. */
export function versionText(output?: 'json' | 'yaml'): string {
  const doc = { pluginVersion: PLUGIN_VERSION, konnectorImage: KONNECTOR_IMAGE };
  if (output === 'json') return `${JSON.stringify(doc, null, 2)}\n`;
  if (output === 'yaml') return stringify(doc);
  return `kubectl-bind ${PLUGIN_VERSION}\nkonnector image it installs: ${KONNECTOR_IMAGE}\n`;
}
