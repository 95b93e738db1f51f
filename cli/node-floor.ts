/**
 * The oldest Node the plugin runs on, what it, its launcher and krew say: the Node 22 line (Node 20 ended in April
 * 2026) from 22.19, the first that undici 8 — @kubernetes/client-node 2's HTTP client, bundled — supports.
 */
export const MIN_NODE = '22.19';

/** Whether Node `version` (`22.18.1`) is older than MIN_NODE. */
export function belowNodeFloor(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [minMajor = 0, minMinor = 0] = MIN_NODE.split('.').map(Number);
  return major < minMajor || (major === minMajor && minor < minMinor);
}
