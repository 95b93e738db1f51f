import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { bindingResponse, providerKubeconfigYaml, responseRedirect } from '../exports/bind-api';
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

// Klutch's BindingResponse byte for byte (its Go structs' key order; the request's ObjectMeta with Go's null
// creationTimestamp, its empty status), with the kubeconfig it hands out: cluster/context/user `default`, the
// consumer's cluster namespace, a token, an https server and the CA inline.
const klutchKubeconfig = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64')}
    server: https://provider.example:6443
  name: default
contexts:
- context:
    cluster: default
    namespace: cluster-8xq2z
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    token: eyJhbGciOiJSUzI1NiJ9.e30.c2ln
`;
const klutchResponse =
  '{"kind":"BindingResponse","apiVersion":"klutch.anynines.com/v1alpha1",' +
  '"authentication":{"oauth2CodeGrant":{"sid":"q7Rk2Z","id":"https://idp.example/realms/klutch/u??~?~"}},' +
  `"kubeconfig":"${Buffer.from(klutchKubeconfig).toString('base64')}",` +
  '"requests":[{"kind":"APIServiceExportRequest","apiVersion":"klutch.anynines.com/v1alpha1",' +
  '"metadata":{"name":"servicebindings.anynines.com","creationTimestamp":null},' +
  '"spec":{"resources":[{"group":"anynines.com","resource":"servicebindings","permissionClaims":[' +
  '{"resource":"secrets","version":"v1","selector":{"names":["*"],"namespaces":["*"],"owner":"Provider"},"required":false,' +
  '"onConflict":{"recreateWhenConsumerSideDeleted":true},"read":{}}]}]},"status":{}}]}';

describe('Klutch’s BindingResponse, byte for byte', () => {
  const check = (raw: string) => {
    const b = decodeBinding(raw, 'q7Rk2Z');
    expect(b).toMatchObject({ server: 'https://provider.example:6443', namespace: 'cluster-8xq2z' });
    expect(parse(b.kubeconfig)).toEqual(parse(klutchKubeconfig)); // Klutch's kubeconfig is exactly what is kept
    expect(b.response.authentication.oauth2CodeGrant.id).toBe('https://idp.example/realms/klutch/u??~?~');
    expect(b.response.requests[0]!.metadata.name).toBe('servicebindings.anynines.com');
    expect(b.response.requests[0]!.spec.resources[0]!.permissionClaims![0]).toMatchObject({
      resource: 'secrets',
      selector: { owner: 'Provider' },
    });
  };
  const std = Buffer.from(klutchResponse).toString('base64');

  it('in standard padded base64 percent-encoded as Go’s url.Values does (+ %2B, / %2F, = %3D)', () => {
    expect(std).toMatch(/[+/]/);
    const query = `response=${std.replaceAll('+', '%2B').replaceAll('/', '%2F').replaceAll('=', '%3D')}`;
    check(new URLSearchParams(query).get('response')!);
  });

  it('in URL-safe base64 (what Klutch’s backend writes), padded and unpadded', () => {
    const urlSafe = std.replaceAll('+', '-').replaceAll('/', '_');
    expect(urlSafe).toMatch(/[-_]/);
    check(new URLSearchParams(`response=${urlSafe.replaceAll('=', '%3D')}`).get('response')!);
    check(urlSafe.replace(/=+$/, ''));
  });
});

describe('the BindingResponse at the callback', () => {
  it('decodes what our backend sends: standard padded base64, percent-encoded in the redirect', () => {
    const raw = new URL(responseRedirect('http://localhost:5000/callback', doc)).searchParams.get('response')!;
    const b = decodeBinding(raw, 'Ab3xY9');
    expect(b.response).toEqual(doc);
    expect(b).toMatchObject({ server: 'https://127.0.0.1:6443', namespace: 'cluster-x7k2p' });
    expect(b.kubeconfig).toBe(providerKubeconfigYaml({ server: 'https://127.0.0.1:6443' }, 'cluster-x7k2p', 'abc'));
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

describe('the kubeconfig of a BindingResponse', () => {
  const withKubeconfig = (text: string) =>
    Buffer.from(JSON.stringify(bindingResponse({ ...docInput(), kubeconfig: text }))).toString('base64');
  const user = (u: string) => kubeconfig.replace('{token: abc}', u);

  it.each([
    ['{exec: {command: /bin/sh, args: [-c, "touch /tmp/pwned"], apiVersion: client.authentication.k8s.io/v1}}', 'users[default].user.exec'],
    ['{auth-provider: {name: oidc, config: {cmd-path: /bin/sh}}}', 'users[default].user.auth-provider'],
    ['{token: abc, tokenFile: /home/me/.ssh/id_rsa}', 'users[default].user.tokenFile'],
    ['{token: abc, client-key: /etc/ssl/private/key.pem}', 'users[default].user.client-key'],
  ])('refuses %s, naming %s, before anything runs or is stored', (u, field) => {
    const e = (() => {
      try {
        decodeBinding(withKubeconfig(user(u)), 'Ab3xY9');
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).message).toContain(field);
    expect((e as CliError).hint).toContain('nothing was stored or run');
  });

  it.each([
    ['insecure-skip-tls-verify: true', 'clusters[default].cluster.insecure-skip-tls-verify'],
    ['proxy-url: "http://evil.example:3128"', 'clusters[default].cluster.proxy-url'],
    ['certificate-authority: /etc/passwd', 'clusters[default].cluster.certificate-authority'],
  ])('refuses a cluster with %s', (field, path) => {
    const text = kubeconfig.replace('certificate-authority-data: ""', field);
    expect(() => decodeBinding(withKubeconfig(text), 'Ab3xY9')).toThrow(path);
  });

  it('keeps only server, CA, namespace and token: the canonical kubeconfig, whatever else was around them', () => {
    const noisy = `${kubeconfig.replace('current-context: default', 'current-context: default\npreferences: {colors: true}')}extensions: [{name: x, extension: {a: 1}}]\n`;
    const b = decodeBinding(
      withKubeconfig(noisy.replace('contexts: [', 'contexts: [{name: other, context: {cluster: default, user: default}}, ')),
      'Ab3xY9',
    );
    expect(b.kubeconfig).toBe(providerKubeconfigYaml({ server: 'https://127.0.0.1:6443' }, 'cluster-x7k2p', 'abc'));
  });

  it('refuses an http server', () => {
    expect(() => decodeBinding(withKubeconfig(kubeconfig.replace('https://', 'http://')), 'Ab3xY9')).toThrow(/is not https/);
  });
});
