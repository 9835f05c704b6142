package atrium

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestChatRunsOnTheDocumentedRoutes(t *testing.T) {
	type call struct{ method, path, body string }
	var calls []call
	run := map[string]any{
		"workflow_id": "wf_1", "step_id": "step_1", "status": "yielded", "pause": 1,
		"pending":          []map[string]string{{"kind": "approval", "detail": "sending needs approval"}},
		"host":             "host_1",
		"cancel_requested": false,
		"created_at":       "1970-01-01T00:00:00.000Z",
		"updated_at":       "1970-01-01T00:00:00.000Z",
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		calls = append(calls, call{r.Method, r.URL.EscapedPath(), string(raw)})
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		answer := func(status int, value any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(value)
		}
		switch {
		case r.URL.Path == "/api/v1/chat/runs":
			answer(202, map[string]any{"workflow_id": body["workflow_id"], "step_id": "step_2", "status": "running"})
		case r.URL.Path == "/api/v1/chat/runs/wf_1/step_1" && r.Method == "GET":
			answer(200, run)
		case r.URL.Path == "/api/v1/chat/runs/wf_1/step_1/resume" && body["pause"] == float64(0):
			answer(409, map[string]any{"error": "pause 0 of step step_1 is stale", "status": "yielded"})
		case r.URL.Path == "/api/v1/chat/runs/wf_1/step_1/resume" && body["background"] == true:
			answer(202, map[string]any{"workflow_id": "wf_1", "step_id": "step_1", "status": "running"})
		case r.URL.Path == "/api/v1/chat/runs/wf_1/step_1/resume":
			answer(200, map[string]any{"workflow_id": "wf_1", "step_id": "step_1", "status": "success",
				"answer": "Sent", "sources": []any{}, "tokens": map[string]int{}, "elapsed_ms": 3})
		case r.URL.Path == "/api/v1/chat/runs/wf_1/step_1/cancel":
			cancelled := map[string]any{}
			for k, v := range run {
				cancelled[k] = v
			}
			cancelled["status"] = "cancelled"
			cancelled["reason"] = "cancelled by request"
			answer(200, cancelled)
		default:
			answer(404, map[string]string{"error": "unknown run"})
		}
	}))
	defer server.Close()
	chat, err := NewChatClient(server.URL + "/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	accepted, err := chat.Start(ctx, ChatRequest{Message: "hi", WorkflowID: "wf_1", OnBusy: "enqueue"})
	if err != nil || *accepted != (ChatRunAccepted{WorkflowID: "wf_1", StepID: "step_2", Status: "running"}) {
		t.Fatalf("start: %+v %v", accepted, err)
	}
	got, err := chat.Run(ctx, "wf_1", "step_1")
	if err != nil || got.Status != "yielded" || got.Pause != 1 || len(got.Pending) != 1 || got.Pending[0].Kind != "approval" {
		t.Fatalf("run: %+v %v", got, err)
	}
	one := 1
	resumed, err := chat.Resume(ctx, "wf_1", "step_1", ChatResumeRequest{Approval: "approve", Pause: &one})
	if err != nil || resumed.Answer != "Sent" {
		t.Fatalf("resume: %+v %v", resumed, err)
	}
	background, err := chat.ResumeInBackground(ctx, "wf_1", "step_1", ChatResumeRequest{Approval: "approve"})
	if err != nil || background.Status != "running" {
		t.Fatalf("resume in background: %+v %v", background, err)
	}
	cancelled, err := chat.Cancel(ctx, "wf_1", "step_1")
	if err != nil || cancelled.Status != "cancelled" || cancelled.Reason != "cancelled by request" {
		t.Fatalf("cancel: %+v %v", cancelled, err)
	}
	zero := 0
	_, err = chat.Resume(ctx, "wf_1", "step_1", ChatResumeRequest{Pause: &zero})
	var stale *Error
	if !errors.As(err, &stale) || stale.Status != 409 {
		t.Fatalf("a stale resume is a 409 *Error, got %v", err)
	}

	want := []call{
		{"POST", "/api/v1/chat/runs", `{"message":"hi","workflow_id":"wf_1","on_busy":"enqueue"}`},
		{"GET", "/api/v1/chat/runs/wf_1/step_1", ""},
		{"POST", "/api/v1/chat/runs/wf_1/step_1/resume", `{"pause":1,"approval":"approve"}`},
		{"POST", "/api/v1/chat/runs/wf_1/step_1/resume", `{"approval":"approve","background":true}`},
		{"POST", "/api/v1/chat/runs/wf_1/step_1/cancel", ""},
		{"POST", "/api/v1/chat/runs/wf_1/step_1/resume", `{"pause":0}`},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls:\n got %+v\nwant %+v", calls, want)
	}
}

func TestChatWaitingListsTheApprovalsPageByPage(t *testing.T) {
	var urls []string
	step := map[string]any{
		"workflow_id": "wf_2", "step_id": "step_9", "pause": 1,
		"pending": []map[string]string{
			{"kind": "approval", "detail": "sending needs approval"},
			{"kind": "consent", "provider": "github", "authorization_url": "https://gw/connect/abc", "detail": "connect github"},
		},
		"draft": "Release is out", "message": "tell the team",
		"asked_by":   map[string]string{"user_id": "ana", "agent_id": "chat", "workflow_id": "wf_2"},
		"asked_at":   "1970-01-01T00:00:00.000Z",
		"created_at": "1970-01-01T00:00:00.000Z",
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		urls = append(urls, r.Method+" "+r.URL.RequestURI())
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path != "/api/v1/chat/runs" || r.Method != "GET":
			w.WriteHeader(404)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "not found"})
		case r.URL.Query().Get("pending") == "money":
			w.WriteHeader(400)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "pending must be one of approval, credentials"})
		case r.URL.Query().Has("cursor"):
			_ = json.NewEncoder(w).Encode(map[string]any{"runs": []any{}})
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"runs": []any{step}, "next_cursor": "c1"})
		}
	}))
	defer server.Close()
	chat, err := NewChatClient(server.URL + "/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	page, err := chat.Waiting(ctx, ChatWaitingQuery{Pending: "approval", Limit: 1})
	if err != nil || page.NextCursor != "c1" || len(page.Runs) != 1 {
		t.Fatalf("first page: %+v %v", page, err)
	}
	got := page.Runs[0]
	if got.StepID != "step_9" || got.Pause != 1 || got.Draft != "Release is out" ||
		got.Pending[0].Kind != "approval" || got.AskedBy.UserID != "ana" ||
		got.Pending[1].Provider != "github" || got.Pending[1].AuthorizationURL != "https://gw/connect/abc" {
		t.Fatalf("waiting step: %+v", got)
	}
	next, err := chat.Waiting(ctx, ChatWaitingQuery{Pending: "approval", Limit: 1, Cursor: page.NextCursor})
	if err != nil || len(next.Runs) != 0 || next.NextCursor != "" {
		t.Fatalf("last page: %+v %v", next, err)
	}
	if _, err := chat.Waiting(ctx, ChatWaitingQuery{}); err != nil {
		t.Fatal(err)
	}
	_, err = chat.Waiting(ctx, ChatWaitingQuery{Pending: "money"})
	var refused *Error
	if !errors.As(err, &refused) || refused.Status != 400 {
		t.Fatalf("a bad field is a 400 *Error, got %v", err)
	}
	want := []string{
		"GET /api/v1/chat/runs?limit=1&pending=approval&status=yielded",
		"GET /api/v1/chat/runs?cursor=c1&limit=1&pending=approval&status=yielded",
		"GET /api/v1/chat/runs?status=yielded",
		"GET /api/v1/chat/runs?pending=money&status=yielded",
	}
	if !reflect.DeepEqual(urls, want) {
		t.Fatalf("requests:\n%v\nwant\n%v", urls, want)
	}
}
