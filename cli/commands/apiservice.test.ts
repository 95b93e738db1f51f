import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readRequests } from './apiservice';

const request = `apiVersion: klutch.anynines.com/v1alpha1
kind: APIServiceExportRequest
metadata:
  name: req
spec:
  resources:
    - group: anynines.com
      resource: postgresqlinstances
`;

describe('kubectl bind apiservice -f', () => {
  it('reads the requests of a file, one a document', () => {
    expect(readRequests('-', `${request}---\n${request}`).map((r) => r.metadata.name)).toEqual(['req', 'req']);
  });

  it("reports a file that is not YAML with the parser's words, its line and column, and binds nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiservice-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'request.yaml');
    writeFileSync(file, request.replace('  name: req', '  name: req\n   bad: [unclosed'));
    let said = '';
    expect(() => readRequests(file, undefined)).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: expect.stringMatching(/request\.yaml:4:9: not YAML: Nested mappings are not allowed in compact mappings$/),
      }),
    );
    try {
      readRequests('-', request.replace('  name: req', '  name: req\n   bad: [unclosed'));
    } catch (e) {
      said = (e as Error).message;
    }
    expect(said).toBe('-:4:9: not YAML: Nested mappings are not allowed in compact mappings');
  });
});
