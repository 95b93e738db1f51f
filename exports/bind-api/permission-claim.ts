/**
 * Permission claims: other resources (credentials Secrets, ConfigMaps) a provider asks to sync along with an exported
 * API. Templates and exports carry plain claims; a binding carries them with the consumer's answer (`state`).
 * Upstream declares most options but the konnector implements only selector.names and the owner.
 */
import { s, type Schema } from '../../lib/schema';
import { groupSchema, resourceSchema } from './common';

export type ClaimOwner = 'Provider' | 'Consumer';

/** A key or a wildcard pattern of labels/annotations. */
export interface Matcher {
  pattern?: string;
}

export interface ResourceSelector {
  /** `*` claims every name. @default ["*"] */
  names?: string[];
  /** `*` claims every namespace; set `[]` for cluster-scoped resources. @default ["*"] */
  namespaces?: string[];
  /** Unset: objects of both sides. */
  owner?: ClaimOwner;
  labelSelectors?: Record<string, string>[];
  fieldSelectors?: string[];
}

export interface CreateOptions {
  replaceExisting?: boolean;
}

export interface OnConflictOptions {
  /** @default true */
  recreateWhenConsumerSideDeleted?: boolean;
}

export interface ReadOptions {
  labels?: Matcher[];
  labelsOnProviderOwnedObjects?: Matcher[];
  annotations?: Matcher[];
  overrideAnnotations?: Matcher[];
}

export interface UpdateOptions {
  fields?: string[];
  preserving?: string[];
  alwaysRecreate?: boolean;
  labels?: Matcher[];
  labelsOnConsumerOwnedObjects?: Matcher[];
  annotations?: Matcher[];
  annotationsOnConsumerOwnedObjects?: Matcher[];
}

export interface PermissionClaim {
  /** @default "" (the core group) */
  group?: string;
  resource: string;
  version: string;
  /** @default {} (everything) */
  selector?: ResourceSelector;
  /** A rejected required claim aborts the binding. */
  required?: boolean;
  /** Mutually exclusive with autoDonate. */
  autoAdopt?: boolean;
  autoDonate?: boolean;
  create?: CreateOptions;
  onConflict?: OnConflictOptions;
  read?: ReadOptions;
  update?: UpdateOptions;
}

export type PermissionClaimState = 'Accepted' | 'Rejected';

/** A claim as an APIServiceBinding holds it: with the consumer's answer. */
export interface AcceptablePermissionClaim extends PermissionClaim {
  state: PermissionClaimState;
}

const matchers = (description: string): Schema =>
  s.array(s.object({ pattern: s.string({ description: 'Key or wildcard pattern.' }) }), { description });
const paths = (description: string): Schema => s.array(s.string(), { description });
const wildcardList = (description: string): Schema => s.array(s.string(), { description }).withDefault(['*']);

const selectorSchema = s.object(
  {
    fieldSelectors: s.array(s.string(), { description: 'Field selectors the objects must match.' }),
    labelSelectors: s.array(s.map(s.string()), { description: 'Label selectors; an object matching any is claimed.' }),
    names: wildcardList('Object names; "*" claims all.'),
    namespaces: wildcardList('Namespaces; "*" claims all, [] for cluster-scoped resources.'),
    owner: s.string({ description: 'Claim only objects owned by this side.', enum: ['Provider', 'Consumer'] }),
  },
  { description: 'Which objects are claimed; unset claims all.', default: {} },
);

const claimProperties = {
  autoAdopt: s.boolean({ description: 'The provider adopts objects the consumer creates.' }),
  autoDonate: s.boolean({ description: 'The consumer owns objects the provider creates.' }),
  create: s.object(
    { replaceExisting: s.boolean({ description: 'Replace a conflicting consumer-owned object.' }) },
    { description: 'Sync matching provider objects down to the consumer.' },
  ),
  group: groupSchema,
  onConflict: s.object(
    { recreateWhenConsumerSideDeleted: s.boolean({ description: 'Recreate provider objects deleted by the consumer.', default: true }) },
    { description: 'How conflicts on the consumer cluster are resolved.', default: {} },
  ),
  read: s.object(
    {
      annotations: matchers('Annotations read from consumer-owned objects.'),
      labels: matchers('Labels read from consumer-owned objects.'),
      labelsOnProviderOwnedObjects: matchers('Labels read from provider-owned objects.'),
      overrideAnnotations: matchers('Annotations read from provider-owned objects.'),
    },
    { description: 'Read access to matching objects.', default: {} },
  ),
  required: s.boolean({ description: 'Whether the binding fails if the claim is rejected.' }),
  resource: resourceSchema,
  selector: selectorSchema,
  update: s.object(
    {
      alwaysRecreate: s.boolean({ description: 'Delete and recreate instead of updating.' }),
      annotations: matchers('Annotations synced to the consumer on provider-owned objects.'),
      annotationsOnConsumerOwnedObjects: matchers('Annotations synced to the consumer on consumer-owned objects.'),
      fields: paths('JSON paths the provider controls.'),
      labels: matchers('Labels synced to the consumer on provider-owned objects.'),
      labelsOnConsumerOwnedObjects: matchers('Labels synced to the consumer on consumer-owned objects.'),
      preserving: paths('JSON paths the consumer keeps controlling.'),
    },
    { description: 'Which updates on the consumer cluster are claimed.' },
  ),
  version: s.string({ description: 'Version of the claimed resource.', minLength: 1 }),
};

const adoptXorDonate = {
  rule: '!(has(self.autoDonate) && self.autoDonate && has(self.autoAdopt) && self.autoAdopt)',
  message: 'donate and adopt are mutually exclusive',
};

const permissionClaimSchema = s.object(claimProperties, {
  description: 'Objects of a resource the provider may access on the consumer cluster.',
  required: ['resource', 'version'],
  rules: [adoptXorDonate],
});

export const acceptablePermissionClaimSchema = s.object(
  { ...claimProperties, state: s.string({ description: "The consumer's answer.", enum: ['Accepted', 'Rejected'] }) },
  {
    description: "A permission claim with the consumer's answer.",
    required: ['resource', 'state', 'version'],
    rules: [adoptXorDonate],
  },
);

export const permissionClaimsSchema = s.array(permissionClaimSchema, { description: 'Other resources synced with the API.' });
