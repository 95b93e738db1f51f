/** The oldest Node line still maintained (Node 20 ended in April 2026): what the plugin, its launcher and krew say. */
export const MIN_NODE = 22;
