/**
 * Adoption of a wrapped managed resource that already exists (`Wrapper.adoptByClaimLabels`): when a platform moves
 * from the `v1` package to `v2`, the managed resources the v1 composites made (generated names) stay in place, and
 * the v2 wrapper must wrap that same object instead of creating a second one — a second a9s ServiceInstance would be
 * a new database. The function cannot list objects itself: it asks Crossplane through the response's requirements
 * (`requirements.resources`), and Crossplane calls it again with what it found (`required_resources`), until the
 * requirements stop changing. Pure: no SDK calls, no I/O.
 */
import type { Input } from '../../recipe';
import { ComposeError, CLAIM_NAME_LABEL, CLAIM_NAMESPACE_LABEL } from './compose';
import { get, join, set } from '../../lib/fieldpath';

type Obj = Record<string, unknown>;

/** The key of the requirement in the response, and of what Crossplane found in the next request. */
export const ADOPT_REQUIREMENT = 'adopt-wrapped';

/** What the function asks Crossplane for: objects of the wrapped kind with the claim labels (cluster-scoped). */
export interface AdoptSelector {
  readonly apiVersion: string;
  readonly kind: string;
  readonly matchLabels: { readonly labels: Record<string, string> };
}

export interface Adoption {
  /** Ask Crossplane for these (also once they were found: the requirements must stay the same to settle). */
  readonly requirement?: AdoptSelector;
  /** The name the wrapped resource was given, when it is not the one composeResource chose. */
  readonly adopted?: string;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Settles the name of the wrapped resource in `composed` (a wrapper composeResource built), in place:
 * - the wrapper exists already (`observed`): it keeps the name it wraps, so a recipe that changes its naming never
 *   renames (re-creates) a live resource, and no lookup is needed any more;
 * - not yet: ask for the objects of the wrapped kind with the claim labels; among those Crossplane found (`found`,
 *   undefined until it was asked), the one with the same `spec.providerConfigRef.name` (several data services share
 *   a kind: a PostgreSQL and a MariaDB claim of one name both have a ServiceInstance) is wrapped by its name. If none
 *   is, but the name composeResource chose is taken by one of them (that other service's), it is refused.
 */
export function adoptWrapped(
  input: Input,
  composed: Obj,
  observed: Obj | undefined,
  found: readonly Obj[] | undefined,
  where: string,
): Adoption {
  const wrapper = input.wrapper;
  if (!wrapper?.adoptByClaimLabels) return {};
  if (!wrapper.clusterScoped)
    throw new ComposeError(
      `cannot adopt the wrapped ${input.resource.kind} ${where}: wrapper.adoptByClaimLabels needs wrapper.clusterScoped`,
    );
  const namePath = join(wrapper.manifestAt, 'metadata.name');
  const kept = get(observed, namePath);
  if (typeof kept === 'string' && kept !== '') {
    const chosen = get(composed, namePath);
    set(composed, namePath, kept);
    return kept === chosen ? {} : { adopted: kept };
  }
  const wrapped = get(composed, wrapper.manifestAt);
  const labels = get(wrapped, 'metadata.labels');
  const claimName = isObj(labels) ? labels[CLAIM_NAME_LABEL] : undefined;
  const claimNamespace = isObj(labels) ? labels[CLAIM_NAMESPACE_LABEL] : undefined;
  if (typeof claimName !== 'string' || typeof claimNamespace !== 'string')
    throw new ComposeError(
      `cannot adopt the wrapped ${input.resource.kind} ${where}: it carries no ${CLAIM_NAME_LABEL}/${CLAIM_NAMESPACE_LABEL} labels`,
    );
  const requirement: AdoptSelector = {
    apiVersion: input.resource.apiVersion,
    kind: input.resource.kind,
    matchLabels: { labels: { [CLAIM_NAME_LABEL]: claimName, [CLAIM_NAMESPACE_LABEL]: claimNamespace } },
  };
  if (found === undefined) return { requirement };
  const config = get(wrapped, 'spec.providerConfigRef.name');
  const same = found.filter((o) => get(o, 'spec.providerConfigRef.name') === config);
  if (same.length === 0) {
    // The name it would create is taken by another data service's claim of the same name and namespace (both
    // PostgreSQL and MariaDB instances are ServiceInstances): applying onto it would turn that instance into this one.
    const own = get(composed, namePath);
    const taken = found.find((o) => get(o, 'metadata.name') === own);
    if (taken)
      throw new ComposeError(
        `cannot create the ${input.resource.kind} ${String(own)} ${where}: it exists for another data service's claim named ${claimNamespace}/${claimName} (ProviderConfig ${String(get(taken, 'spec.providerConfigRef.name'))}); give this claim another name`,
      );
    return { requirement };
  }
  const names = same.map((o) => String(get(o, 'metadata.name'))).sort();
  if (same.length > 1)
    throw new ComposeError(
      `cannot adopt the ${input.resource.kind} of claim ${claimNamespace}/${claimName} ${where}: ${same.length} carry its labels and ProviderConfig ${String(config)} (${names.join(', ')}); delete all but the one that holds the data`,
    );
  set(composed, namePath, names[0]);
  return { requirement, adopted: names[0] };
}
