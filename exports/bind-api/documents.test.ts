import { describe, expect, it } from 'vitest';
import { bindingResponse, decodeResponseParam, goQueryEscape, responseRedirect, wireClaim } from './documents';

const input = {
  sid: 'abc123',
  issuer: 'https://issuer.example/realms/a?b~c',
  subject: 'sub+with/odd?chars~',
  kubeconfig: 'apiVersion: v1\nkind: Config\n',
  group: 'anynines.com',
  resource: 'postgresqlinstances',
  permissionClaims: [{ group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' as const } }],
};

describe('BindingResponse', () => {
  it('has Klutch key order and the kubeconfig in standard base64', () => {
    const r = bindingResponse(input);
    expect(Object.keys(r)).toEqual(['kind', 'apiVersion', 'authentication', 'kubeconfig', 'requests']);
    expect(r.kubeconfig).toBe(Buffer.from(input.kubeconfig).toString('base64'));
    expect(JSON.stringify(r.requests[0])).toBe(
      '{"kind":"APIServiceExportRequest","apiVersion":"klutch.anynines.com/v1alpha1","metadata":{"name":"postgresqlinstances.anynines.com"},' +
        '"spec":{"resources":[{"group":"anynines.com","resource":"postgresqlinstances","permissionClaims":[{"resource":"secrets","version":"v1",' +
        '"selector":{"owner":"Provider","names":["*"],"namespaces":["*"]},"required":false,"onConflict":{"recreateWhenConsumerSideDeleted":true},"read":{}}]}]},"status":{}}',
    );
  });

  it('travels as percent-encoded standard base64 that decodes for every byte, keeping the callback’s own parameters', () => {
    const r = bindingResponse(input);
    const url = new URL(responseRedirect('http://127.0.0.1:5555/callback?z=1&a=x y', r));
    expect([...url.searchParams.keys()]).toEqual(['a', 'response', 'z']); // sorted, as Go's url.Values.Encode
    expect(url.search).toContain('a=x+y');
    const raw = url.search.split('response=')[1]!.split('&')[0]!;
    expect(raw).toMatch(/^[A-Za-z0-9%]+$/); // no '+', '/' or '=' left raw
    expect(decodeResponseParam(url.searchParams.get('response')!)).toEqual(r);
    // Klutch's URL-safe encoding would not decode as standard base64 here ('-' and '_').
    expect(Buffer.from(JSON.stringify(r)).toString('base64url')).not.toBe(url.searchParams.get('response'));
  });

  it('escapes like Go’s url.QueryEscape', () => {
    expect(goQueryEscape("a b+c/d=e~f*g!h'i(j)")).toBe('a+b%2Bc%2Fd%3De~f%2Ag%21h%27i%28j%29');
  });

  it('applies Klutch’s defaulting once (idempotent) and keeps set values', () => {
    const c = wireClaim({ resource: 'configmaps', version: 'v1', required: true, onConflict: { recreateWhenConsumerSideDeleted: false } });
    expect(c).toMatchObject({
      required: true,
      onConflict: { recreateWhenConsumerSideDeleted: false },
      selector: { names: ['*'], namespaces: ['*'] },
    });
    expect(wireClaim(c)).toEqual(c);
  });
});
