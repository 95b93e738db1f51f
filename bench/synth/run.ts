/**
 * bench/synth: wall time of `npm run synth` for the catalog, and of the synth entry (scripts/synth.mjs) for generated
 * catalogs of 10, 100 and 1,000 services, each beside a bare `node -e 0` measured in the same run.
 * Goals: catalog ≤ 10× a bare node start; 1,000 services ≤ 20 s; growth linear. Runs after the first find what the
 * first left in node_modules/.cache/klutch-kit (the bundles, the YAML memo, the krew archive), as a user's runs do.
 * The machine's load average is recorded beside the figures: on 2 cores, other work moves them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

// Benches run bundled from node_modules/.cache, so the repository is found from the working directory (npm sets it).
const root = process.cwd();
if (!existsSync(join(root, 'apis', 'catalog'))) throw new Error(`run from the repository root (npm run bench synth), not ${root}`);
const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-synth-'));

function time(cmd: string, args: string[], runs: number): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed`);
    samples.push(performance.now() - t);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)] as number;
}

/** A catalog folder of n generated services, each with plans on both backends and a few parameters. */
function generatedCatalog(n: number): string {
  const dir = join(tmp, `catalog-${n}`);
  mkdirSync(dir, { recursive: true });
  const apis = JSON.stringify(join(root, 'apis', 'index.ts'));
  for (let i = 0; i < n; i++) {
    writeFileSync(
      join(dir, `svc${i}.ts`),
      `
import { DataService, planMatrix, s } from ${apis};
export default new DataService({
  name: 'svc${i}', kind: 'Svc${i}Instance', defaultBackend: 'a9s', sizes: ['nano', 'small', 'big'],
  a9s: { services: ['a9s-svc${i}1', 'a9s-svc${i}2'], plans: planMatrix({ prefix: 'svc${i}', topologies: { single: ['nano', 'small', 'big'], cluster: ['small', 'big'] }, ssl: 'both' }) },
  parameters: [
    { name: 'maxConnections', schema: s.integer({ minimum: 1 }), keys: { a9s: 'max_connections' } },
    { name: 'logLevel', schema: s.string({ enum: ['debug', 'info', 'warn'] }), keys: { a9s: 'log_level' } },
    { name: 'replicationLag', schema: s.integer({ minimum: 0 }), keys: { a9s: 'replication_lag' }, topologies: ['cluster'] },
  ],
});
`,
    );
  }
  return dir;
}

const runs = Number(process.env.BENCH_RUNS ?? 5);
const load = (): number[] => loadavg().map((l) => Number(l.toFixed(2)));
const loadBefore = load();
const rows: { what: string; ms: number; node: number; ratio: number; goal: string; met: boolean }[] = [];
const nodeBare = () => time(process.execPath, ['-e', '0'], runs);

{
  const node = nodeBare();
  const ms = time('npm', ['run', '--silent', 'synth', '--', '--quiet', '--out', join(tmp, 'dist-catalog')], runs);
  rows.push({ what: 'npm run synth (catalog)', ms, node, ratio: ms / node, goal: '≤ 10× node', met: ms <= 10 * node });
}
for (const n of [10, 100, 1000]) {
  const catalog = generatedCatalog(n);
  const node = nodeBare();
  const ms = time(
    process.execPath,
    ['scripts/synth.mjs', '--quiet', '--catalog', catalog, '--out', join(tmp, `dist-${n}`)],
    n === 1000 ? Math.min(runs, 3) : runs,
  );
  rows.push({
    what: `synth entry, ${n} services`,
    ms,
    node,
    ratio: ms / node,
    goal: n === 1000 ? '≤ 20 s' : '',
    met: n === 1000 ? ms <= 20_000 : true,
  });
}
rmSync(tmp, { recursive: true, force: true });

const per = (n: number) =>
  ((rows.find((r) => r.what === `synth entry, ${n} services`)?.ms ?? 0) -
    (rows.find((r) => r.what === 'synth entry, 10 services')?.ms ?? 0)) /
  (n - 10);
const linear = { msPerServiceTo100: per(100), msPerServiceTo1000: per(1000) };

console.log(`\n${'what'.padEnd(28)} ${'median ms'.padStart(10)} ${'node -e 0'.padStart(10)} ${'ratio'.padStart(7)}  goal`);
for (const r of rows) {
  console.log(
    `${r.what.padEnd(28)} ${r.ms.toFixed(0).padStart(10)} ${r.node.toFixed(0).padStart(10)} ${r.ratio.toFixed(1).padStart(7)}  ${r.goal}${r.goal ? (r.met ? ' ok' : ' MISSED') : ''}`,
  );
}
console.log(
  `growth: ${linear.msPerServiceTo100.toFixed(2)} ms/service (10→100), ${linear.msPerServiceTo1000.toFixed(2)} ms/service (10→1000)`,
);
const catalog = rows[0]!;
const goal = { what: `${catalog.what} ${catalog.goal}`, ratio: Number(catalog.ratio.toFixed(2)), met: catalog.met };
const machine = { node: process.version, cores: availableParallelism(), loadBefore, loadAfter: load() };
console.log(
  `goal: ${goal.what}: ${goal.ratio}× — ${goal.met ? 'met' : 'MISSED'} (node ${machine.node}, load average ${machine.loadBefore.join(' ')} → ${machine.loadAfter.join(' ')})`,
);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'synth.json'),
  `${JSON.stringify({ date: new Date().toISOString(), runs, goal, machine, rows, linear }, null, 2)}\n`,
);
console.log('wrote bench/results/synth.json');
