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
