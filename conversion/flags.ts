/** The conversion server's flags (lib/flags.ts), documented in docs/conversion.md. */
import { flagHelp, type FlagTable } from '../lib/flags';

export const CONVERSION_FLAGS: FlagTable = {
  envPrefix: 'CONVERSION',
  flags: [
    { name: 'table', arg: 'file', help: 'the conversion/conversions.json synth wrote: the APIs, their versions and conversions' },
    { name: 'tls-cert-file', arg: 'file', help: 'the serving certificate (the XRDs name its CA: synth --conversion-ca)' },
    { name: 'tls-key-file', arg: 'file', help: 'its private key' },
    { name: 'address', arg: 'host:port', default: '0.0.0.0:9443', help: 'where it listens; /healthz there too' },
  ],
};

export const CONVERSION_HELP = `Usage: node conversion.mjs [flags]

The klutch-kit conversion server: the webhook of every data-service API with more than one version.

Flags:
${flagHelp(CONVERSION_FLAGS)}
  -h, --help  this text
`;
