package atrium

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The memory client against the real memory service (embedded stores).
func TestE2EEveryMemoryRoute(t *testing.T) {
	s := needServices(t)
	ctx := context.Background()
	memory, err := NewMemoryClient(s.Memory)
	if err != nil {
		t.Fatal(err)
	}
	session, err := memory.CreateSession(ctx, CreateSessionInput{TenantID: "acme", UserID: "u-go", AgentID: "helper"})
	if err != nil || session.SessionID == "" || session.CreatedAt == "" {
		t.Fatal(session, err)
	}
	if r, err := memory.StoreInteraction(ctx, session.SessionID, InteractionInput{UserMessage: "I moved to Lyon", AgentResponse: "Noted."}); err != nil || !r.Success {
		t.Fatal(r, err)
	}
	if r, err := memory.StoreEvent(ctx, session.SessionID, EventInput{Type: "thought", Role: "agent", Content: "lives in France"}); err != nil || !r.Success {
		t.Fatal(r, err)
	}
	context_, err := memory.GetContext(ctx, session.SessionID, ContextQuery{Limit: 10})
	if err != nil || len(context_.StmEvents) != 3 || context_.StmEvents[2].Type != "thought" || context_.StmEvents[0].Role != "user" {
		t.Fatal(context_, err)
	}
	if _, err := memory.Search(ctx, session.SessionID, SearchInput{Query: "where does the user live"}); err != nil {
		t.Fatal(err)
	}
	if health, err := memory.Health(ctx); err != nil || (health.Status != "healthy" && health.Status != "degraded") {
		t.Fatal(health, err)
	}
	if _, err := memory.TriggerGraphAnalytics(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := memory.Forget(ctx, session.SessionID, ForgetInput{Scope: "agent"}); err != nil || r.EventsErased != 3 || r.ErasureID == "" {
		t.Fatal(r, err)
	}
	if c, err := memory.GetContext(ctx, session.SessionID, ContextQuery{Limit: 10}); err != nil || len(c.StmEvents) != 0 {
		t.Fatal(c, err)
	}
	if _, err := memory.Forget(ctx, session.SessionID, ForgetInput{}); err == nil {
		t.Error("Forget without events or scope was sent")
	}
	var failure *Error
	if _, err := memory.GetContext(ctx, "no-such-session", ContextQuery{}); !errors.As(err, &failure) || failure.Status != 404 {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := memory.StoreEvent(ctx, session.SessionID, EventInput{Type: "gossip"}); !errors.As(err, &failure) || failure.Status != 400 {
		t.Errorf("invalid event type: %v", err)
	}
}

// A write retried with its idempotency key returns the first result and is stored once.
func TestE2EARetriedWriteWithItsIdempotencyKeyIsStoredOnce(t *testing.T) {
	s := needServices(t)
	ctx := context.Background()
	memory, _ := NewMemoryClient(s.Memory)
	session, err := memory.CreateSession(ctx, CreateSessionInput{TenantID: "acme", UserID: "u-go-idem"})
	if err != nil {
		t.Fatal(err)
	}
	input := InteractionInput{UserMessage: "my locker code changed", IdempotencyKey: "go-k-1"}
	first, err := memory.StoreInteraction(ctx, session.SessionID, input)
	if err != nil {
		t.Fatal(err)
	}
	again, err := memory.StoreInteraction(ctx, session.SessionID, input)
	if err != nil || again.InteractionID != first.InteractionID {
		t.Fatal(first, again, err)
	}
	event := EventInput{Type: "thought", Role: "agent", Content: "noted", IdempotencyKey: "go-k-2"}
	for i := 0; i < 2; i++ {
		if _, err := memory.StoreEvent(ctx, session.SessionID, event); err != nil {
			t.Fatal(err)
		}
	}
	window, err := memory.GetContext(ctx, session.SessionID, ContextQuery{Limit: 20})
	if err != nil || len(window.StmEvents) != 2 {
		t.Fatal(window, err)
	}
}

// The trace stream against the real chat router: the connection is cut mid-step and the stream
// resumes with Last-Event-ID, so every event arrives exactly once and in order.
func TestE2EACutTraceStreamResumes(t *testing.T) {
	s := needServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	direct, _ := NewChatClient(s.Chat)
	viaProxy, _ := NewChatClient(s.ChatProxy)
	const workflowID = "chat_0f0e0d0c0b0a"
	var before struct{ Accepted int }
	s.control(t, "GET", "/chat/accepted", nil, &before)

	type answer struct {
		response *ChatResponse
		err      error
	}
	answered := make(chan answer, 1)
	stream := viaProxy.Stream(ctx, workflowID, StreamOptions{ReconnectDelay: 20 * time.Millisecond})
	defer stream.Close()
	go func() {
		response, err := direct.Send(ctx, ChatRequest{Message: "hold", WorkflowID: workflowID})
		answered <- answer{response, err}
	}()
	var seen []TraceEvent
	for stream.Next() {
		seen = append(seen, stream.Event())
		if len(seen) == 2 {
			s.control(t, "POST", "/chat/cut", map[string]string{"workflow_id": workflowID}, nil)
		}
	}
	if stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	result := <-answered
	if result.err != nil || result.response.Status != "success" {
		t.Fatal(result.response, result.err)
	}
	if len(seen) != 7 || seen[6].Type != "step_complete" {
		t.Fatalf("%d events: %+v", len(seen), seen)
	}
	for i, event := range seen {
		if event.Seq != i+1 {
			t.Fatalf("event %d has seq %d", i, event.Seq)
		}
	}
	var after struct{ Accepted int }
	s.control(t, "GET", "/chat/accepted", nil, &after)
	if after.Accepted-before.Accepted != 2 {
		t.Errorf("%d connections, want one reconnect", after.Accepted-before.Accepted)
	}
	history, err := direct.History(ctx, workflowID, result.response.StepID)
	if err != nil || len(history) != len(seen) {
		t.Fatal(len(history), err)
	}
	if stream.LastEventID() != "7" {
		t.Errorf("last event id %q", stream.LastEventID())
	}

	tail := direct.Stream(ctx, workflowID, StreamOptions{LastEventID: "5"})
	var seqs []int
	for tail.Next() {
		seqs = append(seqs, tail.Event().Seq)
	}
	if tail.Err() != nil || len(seqs) != 2 || seqs[0] != 6 || seqs[1] != 7 {
		t.Errorf("resumed after 5: %v %v", seqs, tail.Err())
	}
}
