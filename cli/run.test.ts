import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackApi, startLoopbackApi } from '../harness/cluster/loopback-api';
import type { Io } from './io';
import { run } from './run';

// An API server that answers every request with a Status whose message is an attack on the terminal: OSC 52 (write
// the clipboard), a cursor-up and clear-line, a carriage return that rewrites the line, a C1 CSI.
const EVIL = 'denied\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[1A\x1b[2K\rall fine\x9b2J\nsecond line';
let api: LoopbackApi;
let kubeconfig: string;

beforeAll(async () => {
  api = await startLoopbackApi('hostile API server', (_req, res) => {
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: EVIL, reason: 'Forbidden', code: 403 }));
  });
  kubeconfig = join(mkdtempSync(join(tmpdir(), 'klutch-run-test-')), 'kubeconfig');
  writeFileSync(kubeconfig, api.kubeConfig().exportConfig());
});
afterAll(() => {
  api.close();
  rmSync(dirname(kubeconfig), { recursive: true, force: true });
});

describe('kubectl bind errors', () => {
  it("print the other side's words as text: an escape sequence in an API server's message moves no cursor", async () => {
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (d) => (text += String(d)));
    const io: Io = {
      stdout: new PassThrough(),
      stderr,
      stdin: new PassThrough(),
      env: {},
      interactive: false,
      signal: new AbortController().signal,
    };
    expect(await run(['list', '--kubeconfig', kubeconfig], io)).toBe(1);
    expect(text).toContain('denied\\x1b]52;c;Y3VybCBldmlsfHNo\\x07\\x1b[1A\\x1b[2K\\x0dall fine\\x9b2J\nsecond line');
    // No control character but the newlines between lines.
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});
