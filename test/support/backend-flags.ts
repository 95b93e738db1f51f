/** The flags the bind backend cannot start without, with example values: for tests of its options parser. */
export const REQUIRED_BACKEND_FLAGS: readonly string[] = [
  '--oidc-issuer-url=https://issuer.example.com',
  '--oidc-issuer-client-id=klutch-bind',
  '--oidc-issuer-client-secret=s',
  '--oidc-callback-url=https://bind.example.com/callback',
  '--cookie-keys-file=/keys',
  '--external-address=https://api.example.com:6443',
];
