/**
 * Image and package references (`host[:port]/path/name[:tag][@digest]`), as Docker and containerd read them: the
 * release (release/) and the harness's registry (harness/platform/push.ts) name what they push with these.
 */

/** `<host>/<path>` of a reference: its registry host replaced, its path and tag kept (how a registry mirror serves it). */
export function mirrored(host: string, ref: string): string {
  const slash = ref.indexOf('/');
  const first = ref.slice(0, slash);
  // Docker's rule: the first component is a registry when it has a dot or a port, or is localhost.
  const path = slash > 0 && (/[.:]/.test(first) || first === 'localhost') ? ref.slice(slash + 1) : ref;
  return `${host}/${path}`;
}

/** The repository of a reference: without its digest and its tag (a colon after the last slash; a host's port stays). */
export function repositoryOf(ref: string): string {
  const bare = ref.replace(/@.*$/, '');
  const colon = bare.lastIndexOf(':');
  return colon > bare.lastIndexOf('/') ? bare.slice(0, colon) : bare;
}
