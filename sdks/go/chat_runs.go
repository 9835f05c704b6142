package atrium

import (
	"context"
	"strconv"
)

// ChatRunAccepted is the answer of a background start or resume (HTTP 202).
type ChatRunAccepted struct {
	WorkflowID string `json:"workflow_id"`
	StepID     string `json:"step_id"`
	// queued, running, yielded, completed, failed or cancelled.
	Status string `json:"status"`
}

// ChatRunResponse is a run's last answer, at its end or last pause.
type ChatRunResponse struct {
	Status  string         `json:"status"`
	Answer  string         `json:"answer"`
	Sources []ChatSource   `json:"sources"`
	Tokens  map[string]int `json:"tokens"`
	Pending []ChatPending  `json:"pending,omitempty"`
}

// ChatRun is a step's run as GET /chat/runs/{workflow_id}/{step_id} shows it.
type ChatRun struct {
	ChatRunAccepted
	// How many times the step paused; a resume may name the pause it answers.
	Pause int `json:"pause"`
	// When yielded: what the step waits for.
	Pending []ChatPending `json:"pending,omitempty"`
	// Why it failed or was cancelled.
	Reason          string           `json:"reason,omitempty"`
	Response        *ChatRunResponse `json:"response,omitempty"`
	Host            *string          `json:"host"`
	CancelRequested bool             `json:"cancel_requested"`
	LeaseExpiresAt  string           `json:"lease_expires_at,omitempty"`
	CreatedAt       string           `json:"created_at"`
	UpdatedAt       string           `json:"updated_at"`
}

// ChatResumeRequest is what a resume supplies for what the yielded step waits for.
type ChatResumeRequest struct {
	// Pause is the pause answered (ChatRun.Pause); nil answers the current one. A stale one is
	// refused with 409.
	Pause *int `json:"pause,omitempty"`
	// approve or deny.
	Approval string `json:"approval,omitempty"`
	// The broker connection a credentials item asks for.
	ConnectionID string         `json:"connection_id,omitempty"`
	Context      map[string]any `json:"context,omitempty"`
}

type backgroundResume struct {
	ChatResumeRequest
	Background bool `json:"background"`
}

func runPath(workflowID, stepID string) string {
	return "chat/runs/" + seg(workflowID) + "/" + seg(stepID)
}

// Start runs a message in the background: it answers at once with the step's ids (HTTP 202).
func (c *ChatClient) Start(ctx context.Context, request ChatRequest) (*ChatRunAccepted, error) {
	var accepted ChatRunAccepted
	err := c.svc.call(ctx, "POST", "chat/runs", nil, request, &accepted, nil)
	return &accepted, err
}

// Run reads the step's run: status, pause, pending, last answer.
func (c *ChatClient) Run(ctx context.Context, workflowID, stepID string) (*ChatRun, error) {
	var run ChatRun
	err := c.svc.call(ctx, "GET", runPath(workflowID, stepID), nil, nil, &run, nil)
	return &run, err
}

// Resume resumes a yielded step with what it waits for and waits for its answer. A stale or
// second resume is an *Error with Status 409.
func (c *ChatClient) Resume(ctx context.Context, workflowID, stepID string, resume ChatResumeRequest) (*ChatResponse, error) {
	var response ChatResponse
	err := c.svc.call(ctx, "POST", runPath(workflowID, stepID)+"/resume", nil, resume, &response, nil)
	return &response, err
}

// ResumeInBackground resumes a yielded step and answers at once (HTTP 202).
func (c *ChatClient) ResumeInBackground(ctx context.Context, workflowID, stepID string, resume ChatResumeRequest) (*ChatRunAccepted, error) {
	var accepted ChatRunAccepted
	body := backgroundResume{ChatResumeRequest: resume, Background: true}
	err := c.svc.call(ctx, "POST", runPath(workflowID, stepID)+"/resume", nil, body, &accepted, nil)
	return &accepted, err
}

// Cancel stops a queued, running or yielded step on whichever host runs it and returns the run
// afterwards; an ended step is an *Error with Status 409.
func (c *ChatClient) Cancel(ctx context.Context, workflowID, stepID string) (*ChatRun, error) {
	var run ChatRun
	err := c.svc.call(ctx, "POST", runPath(workflowID, stepID)+"/cancel", nil, nil, &run, nil)
	return &run, err
}

// ChatWaitingQuery selects a page of the steps waiting for something.
type ChatWaitingQuery struct {
	// Pending keeps the steps waiting for this kind only ("approval": the approvals to decide).
	Pending string
	// Limit is 1 to 200; 0 leaves it to the host (50).
	Limit int
	// Cursor is the NextCursor of the previous page.
	Cursor string
}

// ChatAskedBy is who a waiting step runs for.
type ChatAskedBy struct {
	UserID     string `json:"user_id"`
	SessionID  string `json:"session_id,omitempty"`
	AgentID    string `json:"agent_id"`
	WorkflowID string `json:"workflow_id"`
}

// ChatWaitingStep is a step waiting for a person or a setting, as the approvals list shows it.
type ChatWaitingStep struct {
	WorkflowID string `json:"workflow_id"`
	StepID     string `json:"step_id"`
	// The pause a resume of this step names.
	Pause   int           `json:"pause"`
	Pending []ChatPending `json:"pending"`
	// The step's answer at the pause: what it would act on once approved.
	Draft     string      `json:"draft"`
	Message   string      `json:"message"`
	AskedBy   ChatAskedBy `json:"asked_by"`
	AskedAt   string      `json:"asked_at"`
	CreatedAt string      `json:"created_at"`
}

// ChatWaitingPage is a page of waiting steps, newest pause first.
type ChatWaitingPage struct {
	Runs []ChatWaitingStep `json:"runs"`
	// Set when the page is full: pass it as Cursor for the next one.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Waiting lists the steps waiting for something, newest pause first (GET
// /chat/runs?status=yielded); Pending "approval" lists the approvals to decide. A bad field is an
// *Error with Status 400 naming it.
func (c *ChatClient) Waiting(ctx context.Context, q ChatWaitingQuery) (*ChatWaitingPage, error) {
	limit := ""
	if q.Limit != 0 {
		limit = strconv.Itoa(q.Limit)
	}
	var page ChatWaitingPage
	params := query("status", "yielded", "pending", q.Pending, "limit", limit, "cursor", q.Cursor)
	err := c.svc.call(ctx, "GET", "chat/runs", params, nil, &page, nil)
	return &page, err
}
