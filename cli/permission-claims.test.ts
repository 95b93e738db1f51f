import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { PermissionClaim } from '../exports/bind-api';
import { Answers } from './io';
import { answerClaims, PROMPT } from './permission-claims';

const secrets: PermissionClaim = { resource: 'secrets', version: 'v1', selector: { owner: 'Provider', names: ['*'] } };
const configmaps: PermissionClaim = { resource: 'configmaps', version: 'v1', selector: { owner: 'Provider' }, required: true };

async function answer(input: string, claims: PermissionClaim[], acceptAll = false) {
  const stdin = new PassThrough();
  stdin.end(input);
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const answers = new Answers(stdin);
  try {
    const result = await answerClaims(claims, { acceptAll, answers, out, provider: 'acme', api: 'ServiceBinding' });
    return { result, text };
  } catch (e) {
    return { error: e as Error & { exitCode?: number }, text };
  } finally {
    answers.close();
  }
}

describe('permission claims', () => {
  it('asks about each claim with Klutch’s prompt and reads one answer per claim', async () => {
    const { result, text } = await answer('No\nYes\n', [secrets, configmaps]);
    expect(result!.map((c) => [c.resource, c.state])).toEqual([
      ['secrets', 'Rejected'],
      ['configmaps', 'Accepted'],
    ]);
    expect(text.split('\n').filter((l) => l === PROMPT)).toHaveLength(2);
    expect(text).toContain('The provider acme wants access to secrets (v1) together with ServiceBinding');
    expect(text).toContain('copied into this cluster');
  });

  it('asks again until the answer is yes or no', async () => {
    const { result, text } = await answer('maybe\ny\n', [secrets]);
    expect(result![0]!.state).toBe('Accepted');
    expect(text).toContain('Please answer Yes or No.');
  });

  it('--accept-permission-claims accepts every claim without reading', async () => {
    const { result, text } = await answer('', [secrets, configmaps], true);
    expect(result!.every((c) => c.state === 'Accepted')).toBe(true);
    expect(text).toContain(`${PROMPT} Yes (--accept-permission-claims)`);
  });

  it('a rejected required claim ends the bind (exit 4); input that ends asks for a terminal or the flag', async () => {
    const rejected = await answer('yes\nno\n', [secrets, configmaps]);
    expect(rejected.error).toMatchObject({ exitCode: 4, message: expect.stringContaining('configmaps is required by the provider') });
    const ended = await answer('', [secrets]);
    expect(ended.error).toMatchObject({ exitCode: 1, hint: expect.stringContaining('--accept-permission-claims') });
  });
});
