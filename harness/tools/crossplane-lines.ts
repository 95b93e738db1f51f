/**
 * The Crossplane lines the harness builds, one table for core and the CLI (crank): v1.20.11 from the v1 module, and
 * from the v2 module core v2.4.0 with crank v2.2.1 (docs/decisions/crossplane-e2e.md). v2.4.0 is the newest v2 core
 * the module proxy serves with its dependencies (v2.4.2 is served, but not the crossplane-runtime v2.4.2 it needs;
 * v2.4.3 and v2.5.x are refused). Crossplane v2.3 moved the CLI out of core's module (to github.com/crossplane/cli,
 * which the proxy does not serve), so crank stays at v2.2.1, the last release that has it; its `render`
 * (Development runtime), `beta validate` and `xpkg` work with any v2 core.
 */
export type CrossplaneLine = 'v1' | 'v2';

export interface CrossplaneLineInfo {
  /** Core's release. */
  readonly version: string;
  /** crank's release (core's, but for v2: see above). */
  readonly crankVersion: string;
  readonly module: string;
  /** The wrapper modules (go.mod, go.sum) that pin what each build reads. */
  readonly crankWrapper: string;
  readonly coreWrapper: string;
  /** The Go variable core's release is stamped into (`-X`; v2.3 moved it to crossplane-runtime). */
  readonly coreVersionVariable: string;
}

export const CROSSPLANE_LINES: Readonly<Record<CrossplaneLine, CrossplaneLineInfo>> = {
  v1: {
    version: 'v1.20.11',
    crankVersion: 'v1.20.11',
    module: 'github.com/crossplane/crossplane',
    crankWrapper: 'harness/tools/crank',
    coreWrapper: 'harness/tools/crossplane',
    coreVersionVariable: 'github.com/crossplane/crossplane/internal/version.version',
  },
  v2: {
    version: 'v2.4.0',
    crankVersion: 'v2.2.1',
    module: 'github.com/crossplane/crossplane/v2',
    crankWrapper: 'harness/tools/crank-v2',
    coreWrapper: 'harness/tools/crossplane-v2',
    coreVersionVariable: 'github.com/crossplane/crossplane-runtime/v2/pkg/version.version',
  },
};
