package atrium

import (
	"context"
	"errors"
	"net/http"
	"strconv"
)

// MemoryClient wraps the memory service's REST API (/api/v1); failures are *Error.
type MemoryClient struct{ svc *service }

// MemoryOption configures NewMemoryClient.
type MemoryOption func(*clientSettings)

// WithMemoryAPIKey sends key as X-API-Key, when the service has API-key auth on.
func WithMemoryAPIKey(key string) MemoryOption {
	return func(s *clientSettings) { s.headers.Set("X-API-Key", key) }
}

// WithJWT sends token as X-JWT-Token, when the service has JWT auth on; it is then the identity.
func WithJWT(token string) MemoryOption {
	return func(s *clientSettings) { s.headers.Set("X-JWT-Token", token) }
}

// WithMemoryHTTPClient sends the calls through client.
func WithMemoryHTTPClient(client *http.Client) MemoryOption {
	return func(s *clientSettings) { s.client = client }
}

// NewMemoryClient is a client of the memory service at baseURL, e.g. http://127.0.0.1:8080.
func NewMemoryClient(baseURL string, options ...MemoryOption) (*MemoryClient, error) {
	svc, err := newServiceWith(baseURL, options)
	if err != nil {
		return nil, err
	}
	return &MemoryClient{svc: svc}, nil
}

type CreateSessionInput struct {
	TenantID string            `json:"tenant_id"`
	UserID   string            `json:"user_id"`
	AgentID  string            `json:"agent_id,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type CreateSessionResult struct {
	SessionID string `json:"session_id"`
	CreatedAt string `json:"created_at"`
}

type InteractionInput struct {
	UserMessage   string            `json:"user_message"`
	AgentResponse string            `json:"agent_response,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	Timestamp     string            `json:"timestamp,omitempty"`
	// AgentResponseSource says where AgentResponse came from: agent (default), tool, or memory
	// when it quotes memory back (then no search quotes it as evidence).
	AgentResponseSource string `json:"agent_response_source,omitempty"`
	// IdempotencyKey, when set, goes out as Idempotency-Key: a retry with the same key (within a
	// day) returns the first result and stores nothing twice.
	IdempotencyKey string `json:"-"`
}

type StoreInteractionResult struct {
	Success       bool   `json:"success"`
	InteractionID string `json:"interaction_id"`
}

type EventInput struct {
	// message, thought, action or observation.
	Type string `json:"type"`
	// user, agent or system.
	Role      string            `json:"role,omitempty"`
	Content   string            `json:"content,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	Timestamp string            `json:"timestamp,omitempty"`
	// Source says where Content came from: user, agent, system, tool or memory (default: Role).
	Source string `json:"source,omitempty"`
	// IdempotencyKey: as for InteractionInput.
	IdempotencyKey string `json:"-"`
	// Payload is base64; it needs MimeType and a blob store on the server (else 412).
	Payload  string `json:"payload,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
}

type StoreEventResult struct {
	Success bool   `json:"success"`
	EventID string `json:"event_id"`
}

type StmEvent struct {
	Role         string            `json:"role"`
	Type         string            `json:"type"`
	Content      string            `json:"content"`
	Timestamp    string            `json:"timestamp,omitempty"`
	Metadata     map[string]string `json:"metadata"`
	BlobURI      string            `json:"blob_uri"`
	BlobMimeType string            `json:"blob_mime_type"`
	// Source: user, agent, system, tool or memory (quoted back from memory).
	Source string `json:"source"`
}

type DialoguePage struct {
	ID        string            `json:"id"`
	SessionID string            `json:"session_id"`
	Topic     string            `json:"topic"`
	Summary   string            `json:"summary"`
	Timestamp string            `json:"timestamp,omitempty"`
	Metadata  map[string]string `json:"metadata"`
}

type MemoryContext struct {
	StmEvents     []StmEvent     `json:"stm_events"`
	RelevantPages []DialoguePage `json:"relevant_pages"`
	Segments      []any          `json:"segments"`
	UserPersona   any            `json:"user_persona,omitempty"`
	LTPM          *struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"ltpm,omitempty"`
}

type ContextQuery struct {
	Limit int
	// Query chooses dialogue pages by semantic search instead of recency.
	Query string
}

type SearchInput struct {
	Query               string            `json:"query"`
	Limit               int               `json:"limit,omitempty"`
	SimilarityThreshold float64           `json:"similarity_threshold,omitempty"`
	Filter              map[string]string `json:"filter,omitempty"`
}

type SearchResult struct {
	Content string `json:"content"`
	// SimilarityScore: higher is closer. For a dialogue page of hybrid search (the default), 0 to 1
	// and descending: the first result's confidence in its matched turn, which a caller can hold
	// to a floor; for vector mode and entities, the cosine similarity.
	SimilarityScore float64 `json:"similarity_score"`
	SourceType      string  `json:"source_type"`
	SourceID        string  `json:"source_id"`
	Timestamp       string  `json:"timestamp,omitempty"`
}

type MemoryHealth struct {
	// healthy or degraded.
	Status       string            `json:"status"`
	Dependencies map[string]string `json:"dependencies"`
	Timestamp    string            `json:"timestamp,omitempty"`
}

type AnalyticsTriggerResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// ForgetInput names what Forget erases: exactly one of EventIDs and Scope ("agent": the
// session's user with the session's agent; "user": the session's user across all agents).
type ForgetInput struct {
	EventIDs []string `json:"event_ids,omitempty"`
	Scope    string   `json:"scope,omitempty"`
}

// ForgetResult counts what Forget erased; ErasureID names its audit record.
type ForgetResult struct {
	Success        bool   `json:"success"`
	ErasureID      string `json:"erasure_id"`
	EventsErased   int    `json:"events_erased"`
	ChainsErased   int    `json:"chains_erased"`
	ChainsRebuilt  int    `json:"chains_rebuilt"`
	EntitiesErased int    `json:"entities_erased"`
	PayloadsErased int    `json:"payloads_erased"`
}

func sessionPath(id, rest string) string { return "api/v1/sessions/" + seg(id) + rest }

func (m *MemoryClient) CreateSession(ctx context.Context, input CreateSessionInput) (*CreateSessionResult, error) {
	var result CreateSessionResult
	err := m.svc.call(ctx, "POST", "api/v1/sessions", nil, input, &result, nil)
	return &result, err
}

func (m *MemoryClient) StoreInteraction(ctx context.Context, sessionID string, input InteractionInput) (*StoreInteractionResult, error) {
	var result StoreInteractionResult
	err := m.svc.callWithHeader(ctx, "POST", sessionPath(sessionID, "/interactions"), nil, idempotency(input.IdempotencyKey), input, &result, nil)
	return &result, err
}

func (m *MemoryClient) StoreEvent(ctx context.Context, sessionID string, input EventInput) (*StoreEventResult, error) {
	var result StoreEventResult
	err := m.svc.callWithHeader(ctx, "POST", sessionPath(sessionID, "/events"), nil, idempotency(input.IdempotencyKey), input, &result, nil)
	return &result, err
}

func (m *MemoryClient) GetContext(ctx context.Context, sessionID string, q ContextQuery) (*MemoryContext, error) {
	limit := ""
	if q.Limit > 0 {
		limit = strconv.Itoa(q.Limit)
	}
	var result MemoryContext
	err := m.svc.call(ctx, "GET", sessionPath(sessionID, "/context"), query("limit", limit, "query", q.Query), nil, &result, nil)
	return &result, err
}

func (m *MemoryClient) Search(ctx context.Context, sessionID string, input SearchInput) ([]SearchResult, error) {
	var result struct{ Results []SearchResult }
	err := m.svc.call(ctx, "POST", sessionPath(sessionID, "/context/search"), nil, input, &result, nil)
	return result.Results, err
}

// Forget erases the given events, or the session's agent or user scope, and everything derived
// from them, for good.
func (m *MemoryClient) Forget(ctx context.Context, sessionID string, input ForgetInput) (*ForgetResult, error) {
	if (len(input.EventIDs) == 0) == (input.Scope == "") {
		return nil, errors.New("atrium: Forget needs exactly one of EventIDs or Scope")
	}
	var result ForgetResult
	err := m.svc.call(ctx, "POST", sessionPath(sessionID, "/forget"), nil, input, &result, nil)
	return &result, err
}

func (m *MemoryClient) Health(ctx context.Context) (*MemoryHealth, error) {
	var result MemoryHealth
	err := m.svc.call(ctx, "GET", "api/v1/health", nil, nil, &result, nil)
	return &result, err
}

func (m *MemoryClient) TriggerGraphAnalytics(ctx context.Context) (*AnalyticsTriggerResult, error) {
	var result AnalyticsTriggerResult
	err := m.svc.call(ctx, "POST", "api/v1/admin/analytics/trigger", nil, struct{}{}, &result, nil)
	return &result, err
}

func idempotency(key string) http.Header {
	if key == "" {
		return nil
	}
	return http.Header{"Idempotency-Key": {key}}
}
