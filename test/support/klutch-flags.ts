/** Klutch's flags of one program, from the fixture copy of its flag definitions (`fs.XxxVar(&..., "name", ...)`). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './root';

/** The flag names in the sections of flags.txt whose heading starts with `sectionPrefix` (a source path). */
export function klutchFlags(sectionPrefix: string): string[] {
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
