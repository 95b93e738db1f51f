import { expect, it } from 'vitest';
import pkg from '../package.json';
import { KONNECTOR_VERSION } from './version';

it('reports the package version in heartbeats', () => {
  expect(KONNECTOR_VERSION).toBe(`v${pkg.version}`);
});
