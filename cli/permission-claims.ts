/**
 * Permission claims: what the provider asks to read or write in the app cluster besides the bound API (the
 * credentials Secrets of a claim, say). Each is shown and answered, as with Klutch's CLI: the prompt ends with
 * `Do you accept this Permission? [No,Yes]` and reads one answer; `--accept-permission-claims` accepts all for scripts.
 * A rejected claim the provider marked `required` ends the bind.
 */
import type { Writable } from 'node:stream';
import type { AcceptablePermissionClaim, PermissionClaim } from '../exports/bind-api';
import { CliError, ExitCode } from './errors';
import type { Answers } from './io';

export const PROMPT = 'Do you accept this Permission? [No,Yes]';

/** One claim in words. */
function describeClaim(c: PermissionClaim, provider: string, api: string): string {
  const what = `${c.resource}${c.group ? `.${c.group}` : ''} (${c.group ? `${c.group}/` : ''}${c.version})`;
  const names = c.selector?.names?.filter((n) => n !== '*') ?? [];
  const owner = c.selector?.owner;
  const lines = [
    `The provider ${provider} wants access to ${what} together with ${api}:`,
    `  objects:    ${names.length ? names.join(', ') : 'any name'}${owner ? `, owned by the ${owner === 'Provider' ? 'provider' : 'app cluster'}` : ''}`,
    owner === 'Provider'
      ? '  direction:  the provider’s objects (such as a claim’s credentials) are copied into this cluster'
      : owner === 'Consumer'
        ? '  direction:  objects of this cluster are copied to the provider'
        : '  direction:  objects are copied both ways',
    ...(c.required ? ['  required:   yes — the binding cannot be made without it'] : []),
  ];
  return lines.join('\n');
}

export async function answerClaims(
  claims: readonly PermissionClaim[],
  o: {
    readonly acceptAll: boolean;
    readonly answers: Answers;
    readonly out: Writable;
    readonly provider: string;
    readonly api: string;
  },
): Promise<AcceptablePermissionClaim[]> {
  const answered: AcceptablePermissionClaim[] = [];
  for (const c of claims) {
    o.out.write(`${describeClaim(c, o.provider, o.api)}\n`);
    let accepted: boolean;
    if (o.acceptAll) {
      o.out.write(`${PROMPT} Yes (--accept-permission-claims)\n`);
      accepted = true;
    } else {
      accepted = await ask(o);
    }
    if (!accepted && c.required)
      throw new CliError(
        `permission claim ${c.resource}${c.group ? `.${c.group}` : ''} is required by the provider and was rejected; nothing was bound`,
        'bind again and accept it, or ask the provider',
        ExitCode.Declined,
      );
    answered.push({ ...c, state: accepted ? 'Accepted' : 'Rejected' });
  }
  return answered;
}

async function ask(o: { readonly answers: Answers; readonly out: Writable }): Promise<boolean> {
  for (;;) {
    o.out.write(`${PROMPT}\n`);
    const line = await o.answers.next();
    if (line === undefined)
      throw new CliError(
        'a permission claim needs an answer, and the input ended',
        'run kubectl bind in a terminal, or pass --accept-permission-claims to accept every claim',
      );
    const a = line.trim().toLowerCase();
    if (a === 'yes' || a === 'y') return true;
    if (a === 'no' || a === 'n') return false;
    o.out.write('Please answer Yes or No.\n');
  }
}
