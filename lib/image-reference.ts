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

/** The repository of an image reference (`registry:5000/a/b:tag@sha256:…` → `registry:5000/a/b`), or undefined. */
export function imageRepository(image: string): string | undefined {
  const [name = '', digest, ...more] = image.split('@');
  if (more.length || (digest !== undefined && !/^sha256:[a-f0-9]{64}$/.test(digest))) return undefined;
  const colon = name.lastIndexOf(':');
  const tagged = colon > name.lastIndexOf('/');
  if (tagged && !/^\w[\w.-]{0,127}$/.test(name.slice(colon + 1))) return undefined;
  const repo = tagged ? name.slice(0, colon) : name;
  return /^[a-z0-9]([a-z0-9._\-/:]*[a-z0-9])?$/.test(repo) ? repo : undefined;
}
