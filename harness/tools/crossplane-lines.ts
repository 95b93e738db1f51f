/**
 * The Crossplane lines the harness builds, one table for the CLI (crank) and core: v1.20.11 from the v1 module, and
 * v2.2.1 from the v2 module (one wrapper module pins both of its commands). v2.2.1 is the newest v2 the module proxy
 * serves (v2.1.0, v2.1.1, v2.1.3, v2.2.0 and v2.2.1 are; version lists are refused).
 */
export type CrossplaneLine = 'v1' | 'v2';

export interface CrossplaneLineInfo {
  readonly version: string;
  readonly module: string;
  /** The wrapper modules (go.mod, go.sum) that pin what each build reads. */
  readonly crankWrapper: string;
  readonly coreWrapper: string;
}

export const CROSSPLANE_LINES: Readonly<Record<CrossplaneLine, CrossplaneLineInfo>> = {
  v1: {
    version: 'v1.20.11',
    module: 'github.com/crossplane/crossplane',
    crankWrapper: 'harness/tools/crank',
    coreWrapper: 'harness/tools/crossplane',
  },
  v2: {
    version: 'v2.2.1',
    module: 'github.com/crossplane/crossplane/v2',
    crankWrapper: 'harness/tools/crank-v2',
    coreWrapper: 'harness/tools/crank-v2',
  },
};
