/** Klutch's flags of one program, from the fixture copy of its flag definitions (`fs.XxxVar(&..., "name", ...)`). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../../harness/root';

/** The flag names in the sections of flags.txt whose heading starts with `sectionPrefix` (a source path). */
function klutchFlags(sectionPrefix: string): string[] {
  const text = readFileSync(join(repoRoot(), 'test', 'fixtures', 'klutch-bind-deploy', 'flags.txt'), 'utf8');
  let inSection = false;
  const names: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) inSection = line.slice(3).startsWith(sectionPrefix);
    const m = /^fs\.\w+Var\(&[\w.]+, "([^"]+)",/.exec(line);
    if (inSection && m) names.push(m[1]!);
  }
  return names;
}

/** How one of Klutch's flags is taken: accepted with a meaning (a subset of what the parser returns), or refused. */
export interface KlutchFlagCase<T> {
  readonly accept?: readonly [args: readonly string[], meaning: Partial<Record<keyof T, unknown>>];
  readonly refuse?: readonly [args: readonly string[], message: string];
}

/**
 * The two tests of every process that takes Klutch's flags: the cases name exactly Klutch's flags of that program,
 * and each is accepted with its meaning or refused by name, never ignored (an accepted flag that is not also refused
 * must change what the parser returns).
 */
export function describeKlutchFlags<T>(o: {
  readonly sectionPrefix: string;
  /** How many flags Klutch's program has at least (a fixture that lost its section must not pass as empty). */
  readonly atLeast: number;
  readonly cases: Readonly<Record<string, KlutchFlagCase<T>>>;
  readonly parse: (argv: readonly string[]) => T;
  /** The command line a case's arguments go into. @default the arguments alone */
  readonly argv?: (args: readonly string[]) => readonly string[];
}): void {
  const flags = klutchFlags(o.sectionPrefix);
  const argv = o.argv ?? ((args) => args);
  const names = (args: readonly string[], name: string) => args.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));

  it('are all known here, and this list has no flag Klutch does not have', () => {
    expect(flags.length).toBeGreaterThanOrEqual(o.atLeast);
    expect(Object.keys(o.cases).sort()).toEqual([...flags].sort());
  });

  it.each(flags)('--%s is accepted with its meaning, or refused by name; never ignored', (name) => {
    const c = o.cases[name]!;
    expect(c.accept ?? c.refuse, `a case for --${name}`).toBeDefined();
    if (c.accept) {
      const [args, meaning] = c.accept;
      expect(names(args, name)).toBe(true);
      const parsed = o.parse(argv(args));
      expect(parsed).toMatchObject(meaning);
      if (!c.refuse) expect(parsed).not.toEqual(o.parse(argv([])));
    }
    if (c.refuse) {
      const [args, message] = c.refuse;
      expect(names(args, name)).toBe(true);
      expect(() => o.parse(argv(args))).toThrow(message);
    }
  });
}
