import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Answers } from './io';

describe('answers from stdin', () => {
  it('hands out one line per prompt, then undefined at the end of input', async () => {
    const stdin = new PassThrough();
    const answers = new Answers(stdin);
    stdin.write('yes\nno\n');
    expect(await answers.next()).toBe('yes');
    const third = answers.next().then(async (l) => [l, await answers.next()]);
    stdin.end();
    expect(await third).toEqual(['no', undefined]);
    answers.close();
  });

  it('ends a prompt that waits on Ctrl-C with exit code 130', async () => {
    const abort = new AbortController();
    const answers = new Answers(new PassThrough(), abort.signal);
    const waiting = answers.next();
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ exitCode: 130, message: 'interrupted while waiting for an answer' });
    await expect(answers.next()).rejects.toMatchObject({ exitCode: 130 });
    answers.close();
  });
});
