package atrium

// Bodies of the Atrium APIs exactly as they travel (proto field names, RFC 3339 times).

// CredentialStrategy says how a credential goes into an outgoing request; the gateway derives it
// from the provider.
type CredentialStrategy struct {
	// oauth2, api_key, basic_auth, query_param, hmac_payload or aws_sigv4.
	Type         string `json:"type"`
	HeaderName   string `json:"header_name,omitempty"`
	HeaderPrefix string `json:"header_prefix,omitempty"`
	ParamName    string `json:"param_name,omitempty"`
	Region       string `json:"region,omitempty"`
	Service      string `json:"service,omitempty"`
}

type ConnectionToken struct {
	ConnectionID string `json:"connection_id"`
	AuthType     string `json:"auth_type"`
	Status       string `json:"status"`
	HealthStatus string `json:"health_status"`
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	// Empty for credentials that do not expire (static keys).
	ExpiresAt  string              `json:"expires_at,omitempty"`
	Scopes     []string            `json:"scopes"`
	IDToken    string              `json:"id_token"`
	APIKey     string              `json:"api_key"`
	Username   string              `json:"username"`
	Password   string              `json:"password"`
	NameID     string              `json:"name_id"`
	Attributes map[string]string   `json:"attributes"`
	Strategy   *CredentialStrategy `json:"strategy,omitempty"`
}

type Connection struct {
	ID           string `json:"id"`
	WorkspaceID  string `json:"workspace_id"`
	ProviderID   string `json:"provider_id"`
	ProviderName string `json:"provider_name"`
	AuthType     string `json:"auth_type"`
	// active, attention, failed or revoked.
	Status          string   `json:"status"`
	HealthStatus    string   `json:"health_status"`
	Scopes          []string `json:"scopes"`
	ExpiresAt       string   `json:"expires_at,omitempty"`
	LastRefreshedAt string   `json:"last_refreshed_at,omitempty"`
	CreatedAt       string   `json:"created_at,omitempty"`
	UpdatedAt       string   `json:"updated_at,omitempty"`
	RevokedAt       string   `json:"revoked_at,omitempty"`
	Subject         string   `json:"subject"`
}

type RefreshResult struct {
	ConnectionID string `json:"connection_id"`
	Status       string `json:"status"`
	HealthStatus string `json:"health_status"`
	ExpiresAt    string `json:"expires_at,omitempty"`
	RefreshedAt  string `json:"refreshed_at,omitempty"`
}

type RevocationResult struct {
	ConnectionID            string `json:"connection_id"`
	TokenDeleted            bool   `json:"token_deleted"`
	ProviderRevoked         bool   `json:"provider_revoked"`
	ProviderRevocationError string `json:"provider_revocation_error"`
	RevokedAt               string `json:"revoked_at,omitempty"`
	Reason                  string `json:"reason"`
}

type StartConnectionInput struct {
	ProviderID  string `json:"provider_id"`
	WorkspaceID string `json:"workspace_id"`
	// Where the browser lands after /auth/callback; its host must be an allowed return domain.
	ReturnURL string   `json:"return_url,omitempty"`
	Scopes    []string `json:"scopes,omitempty"`
}

type StartConnectionResult struct {
	AuthorizationURL string `json:"authorization_url"`
	State            string `json:"state"`
	ExpiresAt        string `json:"expires_at,omitempty"`
}

type CaptureField struct {
	Name     string `json:"name"`
	Secret   bool   `json:"secret"`
	Required bool   `json:"required"`
}

type CaptureSchema struct {
	ProviderID  string         `json:"provider_id"`
	AuthType    string         `json:"auth_type"`
	Fields      []CaptureField `json:"fields"`
	Validatable bool           `json:"validatable"`
}

type CaptureCredentialInput struct {
	ProviderID  string `json:"provider_id"`
	WorkspaceID string `json:"workspace_id"`
	APIKey      string `json:"api_key,omitempty"`
	Username    string `json:"username,omitempty"`
	Password    string `json:"password,omitempty"`
}

type Agent struct {
	ID          string            `json:"id"`
	WorkspaceID string            `json:"workspace_id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	CreatedAt   string            `json:"created_at,omitempty"`
	// Set once the agent is disabled; sessions can no longer be opened for it.
	DisabledAt string `json:"disabled_at,omitempty"`
}

type CreateAgentInput struct {
	WorkspaceID string            `json:"workspace_id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

type AgentSession struct {
	ID           string `json:"id"`
	AgentID      string `json:"agent_id"`
	ConnectionID string `json:"connection_id"`
	WorkspaceID  string `json:"workspace_id"`
	// open or closed; revoking the connection or disabling the agent closes it.
	Status      string `json:"status"`
	CreatedAt   string `json:"created_at,omitempty"`
	ClosedAt    string `json:"closed_at,omitempty"`
	CloseReason string `json:"close_reason"`
}

type CreateAgentSessionInput struct {
	AgentID      string `json:"agent_id"`
	ConnectionID string `json:"connection_id"`
	WorkspaceID  string `json:"workspace_id"`
}

// Webhook is a webhook subscription. Secret is set only in the answer of CreateWebhook (when the
// secret was generated) and of RotateWebhookSecret: it is never returned again.
type Webhook struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	URL        string   `json:"url"`
	EventTypes []string `json:"event_types"`
	// A disabled subscription gets no new events; its pending deliveries wait.
	Enabled     bool   `json:"enabled"`
	Description string `json:"description"`
	// First 16 hex characters of the secret's SHA-256.
	SecretFingerprint string `json:"secret_fingerprint"`
	Secret            string `json:"secret,omitempty"`
	CreatedAt         string `json:"created_at,omitempty"`
	UpdatedAt         string `json:"updated_at,omitempty"`
	// Set while a rotated-out secret is still accepted; deliveries carry both signatures.
	PreviousSecretExpiresAt string `json:"previous_secret_expires_at,omitempty"`
}

// WebhookInput creates a subscription (Name, URL and EventTypes required) or, in UpdateWebhook,
// changes the fields set; the others keep their values.
type WebhookInput struct {
	// Unique, a-z0-9._-.
	Name string `json:"name,omitempty"`
	// https (or http on loopback with WEBHOOK_ALLOW_HTTP_LOOPBACK); never a non-public address.
	URL        string   `json:"url,omitempty"`
	EventTypes []string `json:"event_types,omitempty"`
	// whsec_ + base64 of 24-64 bytes; generated (and returned once) when empty on create. In an
	// update it replaces the current secret without overlap.
	Secret      string  `json:"secret,omitempty"`
	Enabled     *bool   `json:"enabled,omitempty"`
	Description *string `json:"description,omitempty"`
}

type DeleteWebhookResult struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// WebhookDeliveryQuery filters ListWebhookDeliveries; zero values are not sent.
type WebhookDeliveryQuery struct {
	// pending, delivered or failed; all when empty.
	Status string
	// Default 50, maximum 500.
	Limit  int
	Offset int
}

type WebhookAttempt struct {
	Attempt int `json:"attempt"`
	// 0 when no response arrived.
	StatusCode  int    `json:"status_code"`
	Error       string `json:"error"`
	DurationMs  int    `json:"duration_ms"`
	AttemptedAt string `json:"attempted_at,omitempty"`
}

// WebhookDelivery is one event for one subscription; its ID is the webhook-id header, the same
// on every retry.
type WebhookDelivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	EventType string `json:"event_type"`
	// pending, delivered or failed (retries exhausted).
	Status        string `json:"status"`
	AttemptCount  int    `json:"attempt_count"`
	NextAttemptAt string `json:"next_attempt_at,omitempty"`
	LastError     string `json:"last_error"`
	CreatedAt     string `json:"created_at,omitempty"`
	DeliveredAt   string `json:"delivered_at,omitempty"`
	// The signed JSON body: {"type", "timestamp", "data"}.
	Payload  string           `json:"payload"`
	Attempts []WebhookAttempt `json:"attempts"`
}
