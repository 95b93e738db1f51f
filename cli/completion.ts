/**
 * Shell completion, as kubectl asks a plugin for it: on `kubectl bind <TAB>`, kubectl (1.26 and later) runs
 * `kubectl_complete-bind` from PATH with the words after `bind`, the last being the word under the cursor (maybe
 * empty), and reads Cobra's `__complete` protocol back: one candidate per line (`value<TAB>description`), then
 * `:<directive>`. That program is two lines that run `kubectl-bind __complete "$@"` (completeScript); kubectl's own
 * completion (`kubectl completion bash|zsh|fish|powershell`) does the rest, for every shell it supports.
 */
import type { Flag } from '../lib/flags';
import { COMMAND_FLAGS, COMMANDS, COMPLETE_COMMAND } from './flags';

/**
 * What the user puts on PATH as `kubectl_complete-<name>` for the executable `kubectl-<name>` (docs/kubectl-bind.md):
 * `kubectl_complete-bind`, or `kubectl_complete-klutch_bind` for the second name.
 */
export const completeScript = (executable = 'kubectl-bind'): string => `#!/bin/sh
exec ${executable} ${COMPLETE_COMMAND} "$@"
`;

/** Cobra's ShellCompDirective values. */
const Directive = {
  /** The shell may complete file names. */
  Default: 0,
  /** Nothing but the candidates given. */
  NoFileComp: 4,
} as const;

const DESCRIPTIONS: Record<string, string> = {
  apiservice: 'bind with an export request you already have',
  list: 'the bindings of this cluster',
  remove: "unbind: deletes the API's objects here and on the provider",
  why: 'why a claim is not Ready: each hop, and the one that holds it',
  version: "the plugin's version",
  help: "a command's help",
};

/** The candidates and directive for `words` (the words after `kubectl bind`, the last one being completed). */
export function complete(words: readonly string[]): string {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const command = commandOf(before);
  const flags = command === 'version' ? VERSION_FLAGS : command === 'help' ? [] : COMMAND_FLAGS[command].flags;

  // The value of a flag given as `--flag value`: its choices, files, or nothing to offer.
  const previous = flagNamed(flags, before.at(-1));
  if (previous && !previous.boolean && !before.at(-1)!.includes('=')) return valuesOf(previous, current);
  // `--flag=value`
  const inline = /^(--?[\w-]+)=(.*)$/.exec(current);
  if (inline) {
    const f = flagNamed(flags, inline[1]);
    if (f && !f.boolean) return valuesOf(f, inline[2]!, (v) => `${inline[1]}=${v}`);
  }
  if (current.startsWith('-')) {
    const all = [...flags, { name: 'help', short: 'h', help: 'this help' } as Flag];
    return reply(
      all.map((f) => [`--${f.name}`, firstSentence(f.help)] as const).filter(([v]) => v.startsWith(current)),
      Directive.NoFileComp,
    );
  }
  const positionals = positionalsOf(before, flags);
  if (command === '' && positionals.length === 0)
    return reply(
      [...COMMANDS, 'version', 'help'].map((c) => [c, DESCRIPTIONS[c]!] as const).filter(([c]) => c.startsWith(current)),
      Directive.NoFileComp,
    );
  if (command === 'help' && positionals.length === 1)
    return reply(
      COMMANDS.map((c) => [c, DESCRIPTIONS[c]!] as const).filter(([c]) => c.startsWith(current)),
      Directive.NoFileComp,
    );
  // A URL, a binding's name: nothing this program can know without asking a cluster.
  return reply([], Directive.NoFileComp);
}

const VERSION_FLAGS: readonly Flag[] = [{ name: 'output', short: 'o', arg: 'yaml|json', optional: true, help: 'yaml or json' }];

function commandOf(before: readonly string[]): '' | (typeof COMMANDS)[number] | 'version' | 'help' {
  const first = before[0];
  if (first === 'version' || first === 'help') return first;
  return (COMMANDS as readonly string[]).includes(first ?? '') ? (first as (typeof COMMANDS)[number]) : '';
}

function flagNamed(flags: readonly Flag[], word: string | undefined): Flag | undefined {
  const m = /^(?:--([\w-]+)|-(\w))(?:=.*)?$/.exec(word ?? '');
  if (!m) return undefined;
  return flags.find((f) => (m[1] !== undefined ? f.name === m[1] : f.short === m[2]));
}

/** The words that are neither flags nor flag values (the command's name counts). */
function positionalsOf(before: readonly string[], flags: readonly Flag[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < before.length; i++) {
    const w = before[i]!;
    if (w.startsWith('-')) {
      const f = flagNamed(flags, w);
      if (f && !f.boolean && !w.includes('=')) i++;
    } else out.push(w);
  }
  return out;
}

function valuesOf(f: Flag, current: string, render: (v: string) => string = (v) => v): string {
  if (f.arg === 'file') return reply([], Directive.Default);
  const choices = f.arg?.includes('|') ? f.arg.split('|') : [];
  return reply(
    choices.filter((c) => c.startsWith(current)).map((c) => [render(c), ''] as const),
    Directive.NoFileComp,
  );
}

const firstSentence = (help: string): string => help.split(/[;:(]/)[0]!.trim();

function reply(candidates: readonly (readonly [string, string])[], directive: number): string {
  return [...candidates.map(([v, d]) => (d ? `${v}\t${d}` : v)), `:${directive}`, ''].join('\n');
}
