import { AtriumError, AuthenticationError, Code, createJwtVerifier } from "@atrium/kit";
import type { McpOAuthConfig } from "../config/gateway-config.js";

/** RFC 9728's well-known path for the metadata of the resource at `/mcp`. */
export const protectedResourcePath = "/.well-known/oauth-protected-resource/mcp";

export interface McpOAuth {
  /** The protected resource metadata document (RFC 9728) MCP clients discover the issuer from. */
  metadata(): Record<string, unknown>;
  /** The `sub` of a valid access token issued for this resource; AtriumError 401 otherwise. */
  subjectOf(token: string): Promise<string>;
  /** The WWW-Authenticate challenge of a 401 (or 403 with `insufficient_scope`). */
  challenge(error?: "invalid_token" | "insufficient_scope", description?: string): string;
}

/**
 * /mcp as an OAuth 2.1 protected resource of an external authorization server (the MCP
 * authorization flow): clients find the issuer in the metadata, get a token for this resource's
 * URL, and present it as a Bearer token. Verified like every JWT in Atrium (kit's verifier: fixed
 * algorithms, `exp` required, `aud` must be this resource, `iss` the issuer); the token's `sub`
 * picks a scope from the same scope list as keys.
 */
export function createMcpOAuth(config: McpOAuthConfig, publicOrigin: string): McpOAuth {
  const verify = createJwtVerifier({
    jwksUrl: config.jwksUrl,
    audience: config.resource,
    issuer: config.issuer,
  });
  const metadataUrl = `${publicOrigin}${protectedResourcePath}`;
  return {
    metadata: () => ({
      resource: config.resource,
      authorization_servers: [config.issuer],
      bearer_methods_supported: ["header"],
      resource_name: "Atrium MCP",
    }),
    async subjectOf(token) {
      try {
        const payload = await verify(token);
        if (typeof payload.sub !== "string" || payload.sub === "") {
          throw new AuthenticationError("jwt", "JWT lacks claim sub");
        }
        return payload.sub;
      } catch (error) {
        if (error instanceof AtriumError) throw error;
        throw new AtriumError(Code.Unauthenticated, "invalid access token");
      }
    },
    challenge(error, description) {
      const parts = [`resource_metadata="${metadataUrl}"`];
      if (error) parts.unshift(`error="${error}"`);
      if (description) parts.push(`error_description="${description.replace(/"/g, "'")}"`);
      return `Bearer ${parts.join(", ")}`;
    },
  };
}
