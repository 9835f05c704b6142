import { createHash } from "node:crypto";
import { z } from "zod";

/**
 * Who an MCP caller is. Fixed by the key it presented, never by a tool argument: memory reads and
 * writes use tenant, user and agent; credentialed calls use only connections of the workspace.
 */
export interface McpScope {
  tenantId: string;
  userId: string;
  agentId: string;
  workspaceId: string;
}

export interface ScopeDirectory {
  /**
   * The scope of a key by its digest (kit's `apiKeyDigestHex`, the digest the key check itself
   * uses), or undefined when the key has none.
   */
  forKeyDigest(digest: string): McpScope | undefined;
  /** The scope of an OAuth access token's subject (`sub`), or undefined when it has none. */
  forSubject(subject: string): McpScope | undefined;
  size(): number;
}

const entry = z
  .strictObject({
    key_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/i, "must be the 64 hex digits of the key's SHA-256")
      .transform((hex) => hex.toLowerCase())
      .optional(),
    subject: z.string().min(1).optional(),
    tenant_id: z.string().min(1),
    user_id: z.string().min(1),
    agent_id: z.string().min(1).default("mcp"),
    workspace_id: z.string().min(1).optional(),
  })
  .refine((item) => (item.key_sha256 === undefined) !== (item.subject === undefined), {
    message: "needs exactly one of key_sha256 (an API key) or subject (an OAuth token's sub)",
  });

const scopeFile = z.array(entry);

/**
 * Scopes by the SHA-256 of each key, so the scope list is not itself a secret and can live in a
 * config map next to the key file, or by the `sub` of an OAuth access token the gateway verified.
 * workspace_id defaults to tenant_id.
 */
export function parseScopeDirectory(json: string): ScopeDirectory {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new Error(`MCP scopes are not JSON: ${(error as Error).message}`);
  }
  const parsed = scopeFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`MCP scopes: ${issue.path.join(".") || "(root)"} ${issue.message}`);
  }
  const byDigest = new Map<string, McpScope>();
  const bySubject = new Map<string, McpScope>();
  for (const item of parsed.data) {
    const scope = {
      tenantId: item.tenant_id,
      userId: item.user_id,
      agentId: item.agent_id,
      workspaceId: item.workspace_id ?? item.tenant_id,
    };
    if (item.key_sha256 !== undefined) {
      if (byDigest.has(item.key_sha256)) {
        throw new Error(`MCP scopes: key_sha256 ${item.key_sha256.slice(0, 12)}… appears twice`);
      }
      byDigest.set(item.key_sha256, scope);
    } else if (item.subject !== undefined) {
      if (bySubject.has(item.subject)) {
        throw new Error(`MCP scopes: subject ${item.subject} appears twice`);
      }
      bySubject.set(item.subject, scope);
    }
  }
  return {
    forKeyDigest: (digest) => byDigest.get(digest.toLowerCase()),
    forSubject: (subject) => bySubject.get(subject),
    size: () => byDigest.size + bySubject.size,
  };
}

/**
 * A short tag of the memory scope. Workflow ids started through MCP carry it, so a trace resource
 * can refuse workflows of other scopes without any shared state between gateway instances.
 */
export function scopeTag(scope: McpScope): string {
  return createHash("sha256")
    .update(`${scope.tenantId}\u0000${scope.userId}\u0000${scope.agentId}`)
    .digest("hex")
    .slice(0, 12);
}
