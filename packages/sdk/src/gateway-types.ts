// Bodies of the gateway's /v1 API exactly as they travel (proto field names, RFC 3339 times),
// so the OpenAPI document of proto/gateway/v1 describes them too.

export type StrategyType =
  | "oauth2"
  | "api_key"
  | "basic_auth"
  | "query_param"
  | "hmac_payload"
  | "aws_sigv4";

/** How a credential goes into an outgoing request; the gateway derives it from the provider. */
export interface CredentialStrategy {
  type: StrategyType;
  /** api_key: header carrying the key (default X-API-Key); hmac_payload: signature header (default X-Signature). */
  header_name?: string;
  /** Text before the key or signature in the header, e.g. "Bearer " or "sha256=". */
  header_prefix?: string;
  /** query_param: name of the query parameter (default api_key). */
  param_name?: string;
  /** aws_sigv4: signing region and service. */
  region?: string;
  service?: string;
}

export interface ConnectionToken {
  connection_id: string;
  auth_type: string;
  status: string;
  health_status: string;
  access_token: string;
  token_type: string;
  /** Absent for credentials that do not expire (static keys). */
  expires_at?: string;
  scopes: string[];
  id_token: string;
  api_key: string;
  username: string;
  password: string;
  name_id: string;
  attributes: Record<string, string>;
  strategy?: CredentialStrategy;
}

export interface Connection {
  id: string;
  workspace_id: string;
  provider_id: string;
  provider_name: string;
  auth_type: string;
  /** active, attention, failed or revoked. */
  status: string;
  health_status: string;
  scopes: string[];
  expires_at?: string;
  last_refreshed_at?: string;
  created_at?: string;
  updated_at?: string;
  revoked_at?: string;
  subject: string;
}

export interface RefreshResult {
  connection_id: string;
  status: string;
  health_status: string;
  expires_at?: string;
  refreshed_at?: string;
}

export interface RevocationResult {
  connection_id: string;
  token_deleted: boolean;
  provider_revoked: boolean;
  provider_revocation_error: string;
  revoked_at?: string;
  reason: string;
}

export interface StartConnectionInput {
  provider_id: string;
  workspace_id: string;
  /** Where the browser lands after /auth/callback; its host must be an allowed return domain. */
  return_url?: string;
  scopes?: string[];
}

export interface StartConnectionResult {
  authorization_url: string;
  state: string;
  expires_at?: string;
}

export interface CaptureField {
  name: string;
  secret: boolean;
  required: boolean;
}

export interface CaptureSchema {
  provider_id: string;
  auth_type: string;
  fields: CaptureField[];
  validatable: boolean;
}

export interface CaptureCredentialInput {
  provider_id: string;
  workspace_id: string;
  api_key?: string;
  username?: string;
  password?: string;
}

export interface AgentSession {
  id: string;
  agent_id: string;
  connection_id: string;
  workspace_id: string;
  /** open or closed; revoking the connection or disabling the agent closes it. */
  status: string;
  created_at?: string;
  closed_at?: string;
  close_reason: string;
}

export interface CreateAgentSessionInput {
  /** The id of a registered, enabled agent of the connection's workspace. */
  agent_id: string;
  connection_id: string;
  workspace_id: string;
}

export interface Agent {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  metadata: Record<string, string>;
  created_at?: string;
  /** Set once the agent is disabled; sessions can no longer be opened for it. */
  disabled_at?: string;
}

export interface CreateAgentInput {
  workspace_id: string;
  /** Unique among the workspace's enabled agents; 1-100 characters. */
  name: string;
  description?: string;
  metadata?: Record<string, string>;
}

/** A webhook subscription (docs/webhooks.md). */
export interface Webhook {
  id: string;
  name: string;
  url: string;
  event_types: string[];
  /** A disabled subscription gets no new events; its pending deliveries wait. */
  enabled: boolean;
  description: string;
  /** First 16 hex characters of the secret's SHA-256. */
  secret_fingerprint: string;
  /**
   * `whsec_…`, set only in the answer of createWebhook (when the secret was generated) and of
   * rotateWebhookSecret: it is never returned again.
   */
  secret?: string;
  created_at?: string;
  updated_at?: string;
  /** Set while a rotated-out secret is still accepted; deliveries carry both signatures. */
  previous_secret_expires_at?: string;
}

export interface CreateWebhookInput {
  /** Unique, `a-z0-9._-`. */
  name: string;
  /** https (or http on loopback with WEBHOOK_ALLOW_HTTP_LOOPBACK); never a non-public address. */
  url: string;
  /** At least one of the events of docs/webhooks.md, e.g. `connection.attention_required`. */
  event_types: string[];
  /** `whsec_` + base64 of 24-64 bytes; generated (and returned once) when omitted. */
  secret?: string;
  /** Default true. */
  enabled?: boolean;
  description?: string;
}

/** The fields to change; the others keep their values. A new secret revokes any previous one. */
export type UpdateWebhookInput = Partial<CreateWebhookInput>;

export interface DeleteWebhookResult {
  id: string;
  deleted: boolean;
}

export interface WebhookAttempt {
  attempt: number;
  /** 0 when no response arrived. */
  status_code: number;
  error: string;
  duration_ms: number;
  attempted_at?: string;
}

/** One event for one subscription; its id is the `webhook-id` header, the same on every retry. */
export interface WebhookDelivery {
  id: string;
  webhook_id: string;
  event_type: string;
  /** pending, delivered or failed (retries exhausted). */
  status: string;
  attempt_count: number;
  next_attempt_at?: string;
  last_error: string;
  created_at?: string;
  delivered_at?: string;
  /** The signed JSON body: `{"type", "timestamp", "data"}`. */
  payload: string;
  attempts: WebhookAttempt[];
}
