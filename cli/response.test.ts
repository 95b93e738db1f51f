import { describe, expect, it } from 'vitest';
import { bindingResponse, responseRedirect } from '../exports/bind-api';
import { CliError } from './errors';
import { decodeBinding, OtherSessionError } from './response';

const kubeconfig = [
  'apiVersion: v1',
  'kind: Config',
  'clusters: [{name: default, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: ""}}]',
  'users: [{name: default, user: {token: abc}}]',
  'contexts: [{name: default, context: {cluster: default, user: default, namespace: cluster-x7k2p}}]',
  'current-context: default',
  '',
].join('\n');

// A subject and issuer whose JSON gives '+' and '/' in standard base64 (and '-' and '_' in URL-safe base64).
const doc = bindingResponse({
  sid: 'Ab3xY9',
  issuer: 'https://idp.example/realms/a?b~c',
  subject: 'sub+with/odd?chars~',
  kubeconfig,
  group: 'anynines.com',
  resource: 'postgresqlinstances',
  permissionClaims: [],
});
const json = JSON.stringify(doc);

describe('the BindingResponse at the callback', () => {
  it('decodes what our backend sends: standard padded base64, percent-encoded in the redirect', () => {
    const raw = new URL(responseRedirect('http://localhost:5000/callback', doc)).searchParams.get('response')!;
    const b = decodeBinding(raw, 'Ab3xY9');
    expect(b.response).toEqual(doc);
    expect(b).toMatchObject({ kubeconfig, server: 'https://127.0.0.1:6443', namespace: 'cluster-x7k2p' });
  });

  it('decodes what Klutch’s backend sends: URL-safe base64 (padded, as Go’s base64.URLEncoding), escaped by url.Values', () => {
    const urlSafe = Buffer.from(json).toString('base64').replaceAll('+', '-').replaceAll('/', '_');
    expect(urlSafe).toMatch(/[-_]/); // the bytes Klutch's own CLI would fail on
    const query = `response=${urlSafe.replaceAll('=', '%3D')}`;
    const raw = new URLSearchParams(query).get('response')!;
    expect(decodeBinding(raw, 'Ab3xY9').response).toEqual(doc);
  });

  it('decodes standard base64 whose + arrived unescaped (a space after query decoding)', () => {
    const std = Buffer.from(json).toString('base64');
    expect(std).toContain('+');
    const raw = new URLSearchParams(`response=${std}`).get('response')!;
    expect(raw).toContain(' ');
    expect(decodeBinding(raw, 'Ab3xY9').response).toEqual(doc);
  });

  it('turns away a response of another session, and refuses what is not a BindingResponse', () => {
    const raw = Buffer.from(json).toString('base64');
    expect(() => decodeBinding(raw, 'zzzzzz')).toThrow(OtherSessionError);
    const wrongKind = Buffer.from(JSON.stringify({ ...doc, kind: 'Binding' })).toString('base64');
    expect(() => decodeBinding(wrongKind, 'Ab3xY9')).toThrow(
      /kind "Binding" apiVersion "klutch.anynines.com\/v1alpha1", not a BindingResponse/,
    );
    const noNamespace = bindingResponse({ ...docInput(), kubeconfig: kubeconfig.replace(', namespace: cluster-x7k2p', '') });
    expect(() => decodeBinding(Buffer.from(JSON.stringify(noNamespace)).toString('base64'), 'Ab3xY9')).toThrow(CliError);
    expect(() => decodeBinding('not base64 json', 'Ab3xY9')).toThrow(/not base64-encoded JSON/);
  });
});

function docInput() {
  return { sid: 'Ab3xY9', issuer: 'https://idp', subject: 'u', kubeconfig, group: 'anynines.com', resource: 'x', permissionClaims: [] };
}
