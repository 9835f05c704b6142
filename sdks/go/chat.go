package atrium

import (
	"context"
	"net/http"
)

// ChatClient runs messages on the chat router, follows their traces and reads step histories.
type ChatClient struct{ svc *service }

// ChatOption configures NewChatClient.
type ChatOption func(*clientSettings)

// WithHeader sends a header on every chat call: whatever the host application authenticates with.
func WithHeader(name, value string) ChatOption {
	return func(s *clientSettings) { s.headers.Set(name, value) }
}

// WithChatHTTPClient sends the calls through client (keep its Timeout zero for streams).
func WithChatHTTPClient(client *http.Client) ChatOption {
	return func(s *clientSettings) { s.client = client }
}

// NewChatClient is a client of the chat router mounted at baseURL, e.g.
// http://127.0.0.1:8000/api/v1.
func NewChatClient(baseURL string, options ...ChatOption) (*ChatClient, error) {
	svc, err := newServiceWith(baseURL, options)
	if err != nil {
		return nil, err
	}
	return &ChatClient{svc: svc}, nil
}

type ChatRequest struct {
	Message string `json:"message"`
	// Supply one to open the trace stream before the answer arrives; default chat_<12 hex>.
	WorkflowID   string         `json:"workflow_id,omitempty"`
	AgentID      string         `json:"agent_id,omitempty"`
	SystemPrompt string         `json:"system_prompt,omitempty"`
	Context      map[string]any `json:"context,omitempty"`
	// OnBusy is what to do while another step of the workflow runs: reject (409, the host's
	// default), enqueue or interrupt.
	OnBusy string `json:"on_busy,omitempty"`
}

type ChatSource struct {
	Title  string `json:"title"`
	URL    string `json:"url"`
	Source string `json:"source"`
}

type ChatResponse struct {
	WorkflowID string `json:"workflow_id"`
	StepID     string `json:"step_id"`
	// success, failure or yield.
	Status    string         `json:"status"`
	Answer    string         `json:"answer"`
	Sources   []ChatSource   `json:"sources"`
	Tokens    map[string]int `json:"tokens"`
	ElapsedMs float64        `json:"elapsed_ms"`
	// On yield: what the step waits for, each naming the setting or approval to supply.
	Pending []ChatPending `json:"pending,omitempty"`
}

// ChatPending is one thing a yielded step waits for.
type ChatPending struct {
	// credentials, approval or consent.
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// On a consent item: the provider to connect and the gateway's authorization URL a person
	// opens; the step resumes by itself once the consent completes.
	Provider         string `json:"provider,omitempty"`
	AuthorizationURL string `json:"authorization_url,omitempty"`
}

type TraceEvent struct {
	WorkflowID string `json:"workflow_id"`
	StepID     string `json:"step_id"`
	// thinking, tool_start, tool_result, llm_request, llm_response, step_complete, timeout, error.
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
	// Seq numbers the workflow's events; it is the SSE id a stream resumes after.
	Seq int `json:"seq,omitempty"`
}

// Send runs one message on the kernel and waits for the answer.
func (c *ChatClient) Send(ctx context.Context, request ChatRequest) (*ChatResponse, error) {
	var response ChatResponse
	err := c.svc.call(ctx, "POST", "chat", nil, request, &response, nil)
	return &response, err
}

// History returns the trace events of one step.
func (c *ChatClient) History(ctx context.Context, workflowID, stepID string) ([]TraceEvent, error) {
	var result struct{ Events []TraceEvent }
	err := c.svc.call(ctx, "GET", "chat/history/"+seg(workflowID)+"/"+seg(stepID), nil, nil, &result, nil)
	return result.Events, err
}

// Stream follows the workflow's live trace events until a terminal one, reconnecting with
// Last-Event-ID after a drop. Iterate with Next and Event; check Err; Close when leaving early.
func (c *ChatClient) Stream(ctx context.Context, workflowID string, options StreamOptions) *TraceStream {
	return newTraceStream(ctx, c.svc, "chat/stream/"+seg(workflowID), options)
}
