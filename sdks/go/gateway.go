package atrium

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// GatewayClient talks to the gateway's /v1 API: connection tokens (cached, one fetch in flight
// per connection), refresh, revocation, connections, agents, agent sessions and webhook
// subscriptions.
type GatewayClient struct {
	svc   *service
	cache *tokenCache
}

// Option configures NewGatewayClient.
type Option func(*gatewaySettings)

type gatewaySettings struct {
	apiKey     string
	httpClient *http.Client
	expirySkew time.Duration
	staticTTL  time.Duration
	now        func() time.Time
}

// WithAPIKey sends key as X-API-Key, for gateways that require inbound keys.
func WithAPIKey(key string) Option { return func(s *gatewaySettings) { s.apiKey = key } }

// WithHTTPClient sends the gateway calls through client (default http.DefaultClient).
func WithHTTPClient(client *http.Client) Option {
	return func(s *gatewaySettings) { s.httpClient = client }
}

// WithExpirySkew treats a token as expired this long before its expires_at (default 30 s).
func WithExpirySkew(skew time.Duration) Option {
	return func(s *gatewaySettings) { s.expirySkew = skew }
}

// WithStaticTTL reuses a credential without expires_at this long (default 60 s), so a revocation
// reaches this process within that time.
func WithStaticTTL(ttl time.Duration) Option { return func(s *gatewaySettings) { s.staticTTL = ttl } }

// WithClock replaces time.Now for the token cache.
func WithClock(now func() time.Time) Option { return func(s *gatewaySettings) { s.now = now } }

// NewGatewayClient is a client of the gateway at baseURL, e.g. http://127.0.0.1:8082.
func NewGatewayClient(baseURL string, options ...Option) (*GatewayClient, error) {
	settings := gatewaySettings{expirySkew: DefaultExpirySkew, staticTTL: DefaultStaticTTL, now: time.Now}
	for _, option := range options {
		option(&settings)
	}
	headers := http.Header{}
	if settings.apiKey != "" {
		headers.Set("X-API-Key", settings.apiKey)
	}
	svc, err := newService(baseURL, headers, settings.httpClient)
	if err != nil {
		return nil, err
	}
	return &GatewayClient{svc: svc, cache: newTokenCache(settings.expirySkew, settings.staticTTL, settings.now)}, nil
}

// CallOption scopes one call.
type CallOption func(*callSettings)

type callSettings struct {
	workspaceID string
	bypassCache bool
	reason      string
	overlap     *time.Duration
}

// InWorkspace scopes the call: a connection or agent of another workspace answers 404.
func InWorkspace(workspaceID string) CallOption {
	return func(s *callSettings) { s.workspaceID = workspaceID }
}

// BypassCache makes GetToken ask the gateway (which refreshes an expired token itself).
func BypassCache() CallOption { return func(s *callSettings) { s.bypassCache = true } }

// WithReason is recorded with a revocation.
func WithReason(reason string) CallOption { return func(s *callSettings) { s.reason = reason } }

// WithOverlap keeps the previous secret valid this long after RotateWebhookSecret (whole seconds;
// default and maximum 24 h, 0 revokes it at once).
func WithOverlap(overlap time.Duration) CallOption {
	return func(s *callSettings) { s.overlap = &overlap }
}

func settingsOf(options []CallOption) callSettings {
	var s callSettings
	for _, option := range options {
		option(&s)
	}
	return s
}

func cacheKey(connectionID, workspaceID string) string { return workspaceID + "\x00" + connectionID }

// forConnection maps 409/410/400 onto that connection's typed errors.
func forConnection(connectionID string) func(*Error) error {
	return func(e *Error) error { return gatewayError(e, connectionID) }
}

// GetToken returns the connection's credential, cached until shortly before it expires.
func (g *GatewayClient) GetToken(ctx context.Context, connectionID string, options ...CallOption) (*ConnectionToken, error) {
	s := settingsOf(options)
	return g.cache.get(cacheKey(connectionID, s.workspaceID), s.bypassCache, func() (*ConnectionToken, error) {
		var token ConnectionToken
		err := g.svc.call(ctx, "GET", "v1/token/"+seg(connectionID), query("workspace_id", s.workspaceID), nil, &token, forConnection(connectionID))
		if err != nil {
			return nil, err
		}
		return &token, nil
	})
}

func (g *GatewayClient) RefreshConnection(ctx context.Context, connectionID string, options ...CallOption) (*RefreshResult, error) {
	s := settingsOf(options)
	g.cache.delete(cacheKey(connectionID, s.workspaceID))
	body := map[string]string{}
	if s.workspaceID != "" {
		body["workspace_id"] = s.workspaceID
	}
	var result RefreshResult
	err := g.svc.call(ctx, "POST", "v1/refresh/"+seg(connectionID), nil, body, &result, forConnection(connectionID))
	return &result, err
}

// RevokeConnection revokes at the provider and deletes the token; a repeat answers the first
// revocation.
func (g *GatewayClient) RevokeConnection(ctx context.Context, connectionID string, options ...CallOption) (*RevocationResult, error) {
	s := settingsOf(options)
	var result RevocationResult
	err := g.svc.call(ctx, "DELETE", "v1/connections/"+seg(connectionID),
		query("workspace_id", s.workspaceID, "reason", s.reason), nil, &result, forConnection(connectionID))
	g.cache.delete(cacheKey(connectionID, s.workspaceID))
	return &result, err
}

func (g *GatewayClient) GetConnection(ctx context.Context, connectionID string, options ...CallOption) (*Connection, error) {
	s := settingsOf(options)
	var connection Connection
	err := g.svc.call(ctx, "GET", "v1/connections/"+seg(connectionID), query("workspace_id", s.workspaceID), nil, &connection, forConnection(connectionID))
	return &connection, err
}

func (g *GatewayClient) ListConnections(ctx context.Context, options ...CallOption) ([]Connection, error) {
	s := settingsOf(options)
	var result struct{ Connections []Connection }
	err := g.svc.call(ctx, "GET", "v1/connections", query("workspace_id", s.workspaceID), nil, &result, nil)
	return result.Connections, err
}

// StartConnection starts an OAuth flow; send the user's browser to AuthorizationURL.
func (g *GatewayClient) StartConnection(ctx context.Context, input StartConnectionInput) (*StartConnectionResult, error) {
	var result StartConnectionResult
	err := g.svc.call(ctx, "POST", "v1/connect", nil, input, &result, nil)
	return &result, err
}

func (g *GatewayClient) GetCaptureSchema(ctx context.Context, providerID string) (*CaptureSchema, error) {
	var schema CaptureSchema
	err := g.svc.call(ctx, "GET", "v1/capture-schema", query("provider_id", providerID), nil, &schema, nil)
	return &schema, err
}

// CaptureCredential captures a static credential (api_key, basic_auth); the broker validates it.
func (g *GatewayClient) CaptureCredential(ctx context.Context, input CaptureCredentialInput) (*Connection, error) {
	var connection Connection
	err := g.svc.call(ctx, "POST", "v1/capture-credential", nil, input, &connection, nil)
	return &connection, err
}

func (g *GatewayClient) CreateAgent(ctx context.Context, input CreateAgentInput) (*Agent, error) {
	var agent Agent
	err := g.svc.call(ctx, "POST", "v1/agents", nil, input, &agent, nil)
	return &agent, err
}

// ListAgents returns the workspace's agents, disabled ones included, oldest first.
func (g *GatewayClient) ListAgents(ctx context.Context, workspaceID string) ([]Agent, error) {
	var result struct{ Agents []Agent }
	err := g.svc.call(ctx, "GET", "v1/agents", query("workspace_id", workspaceID), nil, &result, nil)
	return result.Agents, err
}

func (g *GatewayClient) GetAgent(ctx context.Context, agentID string, options ...CallOption) (*Agent, error) {
	s := settingsOf(options)
	var agent Agent
	err := g.svc.call(ctx, "GET", "v1/agents/"+seg(agentID), query("workspace_id", s.workspaceID), nil, &agent, nil)
	return &agent, err
}

// DisableAgent disables the agent and closes its open sessions; a repeat returns it unchanged.
func (g *GatewayClient) DisableAgent(ctx context.Context, agentID string, options ...CallOption) (*Agent, error) {
	s := settingsOf(options)
	var agent Agent
	err := g.svc.call(ctx, "DELETE", "v1/agents/"+seg(agentID), query("workspace_id", s.workspaceID), nil, &agent, nil)
	return &agent, err
}

// CreateAgentSession answers 404 for an unknown agent, 412 for a disabled one.
func (g *GatewayClient) CreateAgentSession(ctx context.Context, input CreateAgentSessionInput) (*AgentSession, error) {
	var session AgentSession
	err := g.svc.call(ctx, "POST", "v1/agent-sessions", nil, input, &session, nil)
	return &session, err
}

func (g *GatewayClient) GetAgentSession(ctx context.Context, sessionID string) (*AgentSession, error) {
	var session AgentSession
	err := g.svc.call(ctx, "GET", "v1/agent-sessions/"+seg(sessionID), nil, nil, &session, nil)
	return &session, err
}

func webhookPath(webhookID string) string { return "v1/webhooks/" + seg(webhookID) }

// CreateWebhook subscribes input.URL to input.EventTypes. Without a Secret one is generated and
// returned in this answer only. Webhooks hear every connection event, so a gateway without
// inbound keys answers the webhook calls with 412.
func (g *GatewayClient) CreateWebhook(ctx context.Context, input WebhookInput) (*Webhook, error) {
	var webhook Webhook
	err := g.svc.call(ctx, "POST", "v1/webhooks", nil, input, &webhook, nil)
	return &webhook, err
}

func (g *GatewayClient) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	var result struct{ Webhooks []Webhook }
	err := g.svc.call(ctx, "GET", "v1/webhooks", nil, nil, &result, nil)
	return result.Webhooks, err
}

func (g *GatewayClient) GetWebhook(ctx context.Context, webhookID string) (*Webhook, error) {
	var webhook Webhook
	err := g.svc.call(ctx, "GET", webhookPath(webhookID), nil, nil, &webhook, nil)
	return &webhook, err
}

// UpdateWebhook changes the fields set in input; the others keep their values.
func (g *GatewayClient) UpdateWebhook(ctx context.Context, webhookID string, input WebhookInput) (*Webhook, error) {
	var webhook Webhook
	err := g.svc.call(ctx, "PATCH", webhookPath(webhookID), nil, input, &webhook, nil)
	return &webhook, err
}

// DeleteWebhook deletes the subscription with its deliveries.
func (g *GatewayClient) DeleteWebhook(ctx context.Context, webhookID string) (*DeleteWebhookResult, error) {
	var result DeleteWebhookResult
	err := g.svc.call(ctx, "DELETE", webhookPath(webhookID), nil, nil, &result, nil)
	return &result, err
}

// ListWebhookDeliveries returns the subscription's deliveries, newest first, each with every
// attempt.
func (g *GatewayClient) ListWebhookDeliveries(ctx context.Context, webhookID string, q WebhookDeliveryQuery) ([]WebhookDelivery, error) {
	limit, offset := "", ""
	if q.Limit > 0 {
		limit = strconv.Itoa(q.Limit)
	}
	if q.Offset > 0 {
		offset = strconv.Itoa(q.Offset)
	}
	var result struct{ Deliveries []WebhookDelivery }
	err := g.svc.call(ctx, "GET", webhookPath(webhookID)+"/deliveries",
		query("status", q.Status, "limit", limit, "offset", offset), nil, &result, nil)
	return result.Deliveries, err
}

// RotateWebhookSecret replaces the secret with a generated one, returned in this answer only; the
// previous one stays valid for WithOverlap (default 24 h).
func (g *GatewayClient) RotateWebhookSecret(ctx context.Context, webhookID string, options ...CallOption) (*Webhook, error) {
	s := settingsOf(options)
	body := map[string]int{}
	if s.overlap != nil {
		body["overlap_seconds"] = int(s.overlap.Seconds())
	}
	var webhook Webhook
	err := g.svc.call(ctx, "POST", webhookPath(webhookID)+"/rotate-secret", nil, body, &webhook, nil)
	return &webhook, err
}

// RedeliverWebhook puts a failed delivery back to pending with the same webhook-id; a delivered
// or still pending one answers 412.
func (g *GatewayClient) RedeliverWebhook(ctx context.Context, webhookID, deliveryID string) (*WebhookDelivery, error) {
	var delivery WebhookDelivery
	err := g.svc.call(ctx, "POST", webhookPath(webhookID)+"/deliveries/"+seg(deliveryID)+"/redeliver",
		nil, map[string]string{}, &delivery, nil)
	return &delivery, err
}
