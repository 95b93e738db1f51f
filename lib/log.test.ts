import { describe, expect, it } from 'vitest';
import { newLogger } from './log';

const lines = (level: string, write: (log: ReturnType<typeof newLogger>) => void, base?: Record<string, unknown>) => {
  const out: Record<string, unknown>[] = [];
  write(newLogger({ level, ...(base ? { base } : {}) }, { write: (l: string) => void out.push(JSON.parse(l)) }));
  return out;
};

describe('newLogger', () => {
  it('writes the level as a word and the time in ISO 8601 UTC', () => {
    const before = Date.now();
    const [line] = lines('info', (log) => log.warn({ key: 'ns/a' }, 'cannot read the Lease'));
    expect(line).toMatchObject({ level: 'warn', key: 'ns/a', msg: 'cannot read the Lease' });
    expect(line!.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(line!.time as string)).toBeGreaterThanOrEqual(before - 1);
  });

  it('keeps the level, in children too, and the fields every line carries', () => {
    const out = lines(
      'info',
      (log) => {
        log.debug('not written');
        log.child({ controller: 'export' }).error('written');
      },
      { component: 'konnector' },
    );
    expect(out).toEqual([expect.objectContaining({ level: 'error', component: 'konnector', controller: 'export', msg: 'written' })]);
    expect(out[0]).not.toHaveProperty('pid');
  });
});
