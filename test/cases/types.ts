/**
 * Claim test cases, written from the Klutch reference, shared by the suites that check the XRDs: the offline
 * schema and CEL checks (test/synth) and the real API server suite (test/cluster).
 */
import type { Backend } from '../../recipe';

/** A claim to create: its `spec` (compositionRef is added from `backend`) and whether the API must accept it. */
export interface CreateCase {
  readonly name: string;
  /** Why the case matters (the rule or the reference line it exercises). */
  readonly reason: string;
  /** The composition the claim names; none means the XRD's default. */
  readonly backend?: Backend;
  readonly spec: Record<string, unknown>;
  readonly valid: boolean;
  /** For invalid cases: a piece of the error message the API server (or crank) reports. */
  readonly error?: string;
}

/** A stored claim changed with a JSON merge patch on `spec`, and whether the API must accept the change. */
export interface UpdateCase {
  readonly name: string;
  readonly reason: string;
  readonly backend?: Backend;
  readonly spec: Record<string, unknown>;
  readonly patch: Record<string, unknown>;
  readonly valid: boolean;
  readonly error?: string;
}

export interface ApiCases {
  /** The API's `name` (`postgresql`, `servicebinding`). */
  readonly api: string;
  readonly create: readonly CreateCase[];
  readonly update: readonly UpdateCase[];
}
