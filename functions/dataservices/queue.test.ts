import { describe, expect, it } from 'vitest';
import { CNPG_BACKUP_QUEUE } from '../../backends/cnpg-backup';
import { queuedBehind, waitsItsTurn } from './queue';

const selector = {
  apiVersion: 'postgresql.cnpg.io/v1',
  kind: 'Backup',
  namespace: 'team-a',
  matchLabels: { labels: { 'cnpg.io/cluster': 'pg' } },
};
const backup = (name: string, made: string, phase?: string) => ({
  apiVersion: 'postgresql.cnpg.io/v1',
  kind: 'Backup',
  metadata: { name, namespace: 'team-a', creationTimestamp: made, labels: { 'cnpg.io/cluster': 'pg' } },
  status: phase ? { phase } : {},
});

describe("queuedBehind: CloudNativePG's order of one instance's backups", () => {
  it('waits only while made and neither running nor done', () => {
    expect(waitsItsTurn(CNPG_BACKUP_QUEUE, undefined)).toBe(false);
    expect(waitsItsTurn(CNPG_BACKUP_QUEUE, { status: { phase: 'pending' } })).toBe(false);
    expect(waitsItsTurn(CNPG_BACKUP_QUEUE, backup('b', 'T1'))).toBe(true);
    expect(waitsItsTurn(CNPG_BACKUP_QUEUE, backup('b', 'T1', 'pending'))).toBe(true);
    for (const phase of ['started', 'running', 'completed', 'failed'])
      expect(waitsItsTurn(CNPG_BACKUP_QUEUE, backup('b', 'T1', phase))).toBe(false);
  });

  it('made in the same second, the first by name goes first (CanExecuteBackup sorts by time, then name)', () => {
    const same = '2026-12-07T10:00:00Z';
    const [a, b] = [backup('a', same, 'pending'), backup('b', same, 'pending')];
    expect(queuedBehind(CNPG_BACKUP_QUEUE, b, selector, [a, b])?.text).toMatch(/^waits for Backup a, made before it/);
    expect(queuedBehind(CNPG_BACKUP_QUEUE, a, selector, [a, b])).toBeUndefined();
  });

  it('names the one that runs before an older one that waits, and the first of several that run', () => {
    const own = backup('own', '2026-12-07T10:00:05Z', 'pending');
    const found = [
      backup('old-waiting', '2026-12-07T09:00:00Z', 'pending'),
      backup('runs-later', '2026-12-07T10:00:01Z', 'started'),
      backup('runs', '2026-12-07T10:00:00Z', 'running'),
    ];
    expect(queuedBehind(CNPG_BACKUP_QUEUE, own, selector, found)).toEqual({
      reason: 'Queued',
      text: 'waits for Backup runs, running: CloudNativePG takes one backup of an instance at a time, the oldest first',
    });
  });
});
