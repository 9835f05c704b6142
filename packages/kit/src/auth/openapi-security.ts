/**
 * How a host with kit's authenticator (createAuthenticator) is called, as OpenAPI 3.0 security
 * schemes: the header forms api-key.ts and jwt.ts read. The OpenAPI generator (memory) and the
 * chat host's description both state them from here.
 */
export const authenticatorSecuritySchemes = {
  ApiKey: {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "The API key.",
  },
  ApiKeyBearer: {
    type: "http",
    scheme: "bearer",
    description: "The API key as a bearer token: `Authorization: Bearer <key>`.",
  },
  JwtToken: {
    type: "apiKey",
    in: "header",
    name: "X-JWT-Token",
    description: "A JWT carrying `tenant_id`, `user_id`, `exp` (and optionally `agent_id`).",
  },
  JwtAuthorization: {
    type: "http",
    scheme: "JWT",
    description: "The same JWT in the Authorization header: `Authorization: JWT <token>`.",
  },
} as const;

/**
 * Any one alternative is enough. The enabled checks all run, so with both on a caller sends a key
 * and a token, in two different headers; `{}` last: every mechanism is off by default.
 */
export const authenticatorSecurity: Record<string, string[]>[] = [
  { ApiKey: [] },
  { ApiKeyBearer: [] },
  { JwtToken: [] },
  { JwtAuthorization: [] },
  { ApiKey: [], JwtToken: [] },
  { ApiKey: [], JwtAuthorization: [] },
  { ApiKeyBearer: [], JwtToken: [] },
  {},
];

/**
 * `info.description` text on the mechanisms, mTLS included (OpenAPI 3.0 has no scheme for it);
 * `prefix` is the service's variable prefix, e.g. `ATRIUM_MEMORY`.
 */
export function authenticatorDescription(prefix: string): string {
  return (
    "Authentication is off by default; each mechanism is switched on separately and the " +
    "enabled ones run in the order mTLS, API key, JWT, all of which must pass: an API key " +
    `(\`${prefix}_API_KEY\`) as \`X-API-Key\` or \`Authorization: Bearer\`, a JWT ` +
    `(\`${prefix}_JWT_SECRET\`, \`_PUBLIC_KEY_FILE\` or \`_JWKS_URL\`) as \`X-JWT-Token\` or ` +
    "`Authorization: JWT`, whose claims are then the caller's identity. With " +
    "`<PREFIX>_ENABLE_TLS=true` and `<PREFIX>_REQUIRE_MTLS=true` the server also requires a " +
    "client certificate issued by the CA in `<PREFIX>_TLS_CA_FILE`; it is checked in the TLS " +
    "handshake, before any HTTP, and then the other enabled checks run. Failed checks answer 401."
  );
}
