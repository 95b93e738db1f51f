/**
 * How a test tells the running stand-ins (the sandbox's a8s operators, sandbox/a8s-operators.ts) to leave its objects
 * alone: it labels its namespace `klutch-kit.test/stand-in: off` before it makes anything there, and then plays the
 * operators itself with the stand-in classes (a8s-operators.ts), e.g. a PostgreSQL that never comes up. Without the
 * label the running stand-in would mark that PostgreSQL Running a second later, and the test would race it.
 */
import type { Kube } from '../cluster/kube';

export const STAND_IN_LABEL = 'klutch-kit.test/stand-in';

/** The label that turns the running stand-ins off for a namespace (merge it into the namespace's labels). */
export const STAND_IN_OFF: Readonly<Record<string, string>> = { [STAND_IN_LABEL]: 'off' };

/** The namespaces the running stand-ins leave alone; throws if they cannot be listed (the stand-in's tick retries). */
export async function namespacesLeftAlone(kube: Kube): Promise<Set<string>> {
  const r = await kube.request('GET', `/api/v1/namespaces?labelSelector=${encodeURIComponent(`${STAND_IN_LABEL}=off`)}`);
  if (r.code !== 200)
    throw new Error(`cannot list the namespaces labelled ${STAND_IN_LABEL}=off: ${r.code} ${JSON.stringify(r.body?.message)}`);
  return new Set(((r.body as { items?: { metadata: { name: string } }[] }).items ?? []).map((n) => n.metadata.name));
}
