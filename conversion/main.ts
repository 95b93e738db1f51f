/**
 * The conversion server's process entry (conversion/server.ts): `node conversion.mjs --table <conversions.json>
 * --tls-cert-file <pem> --tls-key-file <pem> [--address host:port]`. SIGTERM closes the listener and lets the reviews
 * in flight finish.
 */
import { readFileSync } from 'node:fs';
import { addressFlag, parseFlags, UsageError } from '../lib/flags';
import { CONVERSION_FLAGS, CONVERSION_HELP } from './flags';
import { startConversionServer } from './server';
import { parseConversionTable } from './table';

async function main(argv: readonly string[]): Promise<void> {
  const f = parseFlags(CONVERSION_FLAGS, argv, process.env);
  if (f.help) {
    process.stdout.write(CONVERSION_HELP);
    return;
  }
  const need = (name: string): string => {
    const v = f.value(name);
    if (!v) throw new UsageError(`--${name} is required`);
    return v;
  };
  const tablePath = need('table');
  const table = parseConversionTable(readFileSync(tablePath, 'utf8'), tablePath);
  const { host, port } = addressFlag('address', f.value('address') ?? '0.0.0.0:9443');
  const log = (line: string) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), msg: line })}\n`);
  const server = await startConversionServer(
    { table, cert: readFileSync(need('tls-cert-file')), key: readFileSync(need('tls-key-file')), log },
    port,
    host,
  );
  log(`serving ${table.apis.map((a) => a.path).join(', ') || 'no API'} on ${host}:${port}`);
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`conversion: ${(e as Error).message}\n`);
  process.exit(e instanceof UsageError ? 2 : 1);
});
