import { describe, expect, it } from 'vitest';
import { expiring, rotating } from './list';

describe('kubectl bind list: the time left of bindings with a lifetime', () => {
  const now = Date.parse('2026-12-05T12:00:00Z');
  it('names the soonest three, how long they have or since when they expired, and how many more', () => {
    const expiries = [
      { name: 'team/gone', at: '2026-12-05T11:57:00Z' },
      { name: 'team/brief', at: '2026-12-05T12:12:30Z' },
      { name: 'team/day', at: '2026-12-06T09:00:00Z' },
      { name: 'team/week', at: '2026-12-12T12:00:00Z' },
      { name: 'team/month', at: '2027-01-05T12:00:00Z' },
    ];
    expect(expiring(expiries, now)).toBe(
      'team/gone expired 3m ago, team/brief expires in 12m, team/day expires in 21h, 2 more expire later',
    );
    expect(expiring([], now)).toBe('');
  });
});

describe('kubectl bind list: the rotations under way', () => {
  const now = Date.parse('2026-12-05T12:00:00Z');
  it('says which rotate, whose new credentials travel, how long the old ones work, and nothing once the overlap ended', () => {
    expect(
      rotating(
        [
          { name: 'team/waiting' },
          { name: 'team/travelling', publishedAt: '2026-12-05T11:59:30Z' },
          { name: 'team/overlap', publishedAt: '2026-12-05T11:59:00Z', retiresAt: '2026-12-05T12:04:10Z' },
          { name: 'team/done', retiresAt: '2026-12-05T11:59:00Z' },
        ],
        now,
      ),
    ).toBe(
      "team/waiting is rotating its credentials, team/travelling's new credentials are on their way here, team/overlap's old credentials work for 4m",
    );
    const many = ['a', 'b', 'c', 'd', 'e'].map((n) => ({ name: `team/${n}` }));
    expect(rotating(many, now)).toMatch(/team\/c is rotating its credentials, 2 more rotating$/);
    expect(rotating([], now)).toBe('');
  });
});
