package atrium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The cases of sdks/conformance/services.json against the real services (the Python and
// TypeScript SDKs run the same file): '$name.field' references, results containing the expected
// fields, errors by SDK-neutral name.
type serviceCase struct {
	Name  string `json:"name"`
	Steps []struct {
		Call   string         `json:"call"`
		Args   map[string]any `json:"args"`
		Save   string         `json:"save"`
		Expect map[string]any `json:"expect"`
	} `json:"steps"`
}

func TestServicesConformance(t *testing.T) {
	s := needServices(t)
	raw, err := os.ReadFile("../conformance/services.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Cases []serviceCase }
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	fixture := map[string]any{}
	encoded, _ := json.Marshal(s)
	json.Unmarshal(encoded, &fixture)

	for _, c := range file.Cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			gateway, _ := NewGatewayClient(s.Gateway, WithAPIKey(s.GatewayAPIKey))
			memory, _ := NewMemoryClient(s.Memory)
			chat, _ := NewChatClient(s.Chat)
			names := map[string]any{}
			for k, v := range fixture {
				names[k] = v
			}
			for _, step := range c.Steps {
				args := resolve(step.Args, names).(map[string]any)
				expect := resolve(step.Expect, names).(map[string]any)
				where := fmt.Sprintf("%s %v", step.Call, args)
				result, err := callStep(context.Background(), gateway, memory, chat, step.Call, args)
				if err != nil {
					checkError(t, where, err, expect)
					continue
				}
				if name, ok := expect["error"]; ok {
					t.Fatalf("%s: expected %v, got %v", where, name, result)
				}
				var generic any
				encoded, _ := json.Marshal(result)
				json.Unmarshal(encoded, &generic)
				if length, ok := expect["length"].(float64); ok {
					if list, _ := generic.([]any); len(list) != int(length) {
						t.Fatalf("%s: %d items, want %v", where, len(list), length)
					}
				}
				if want, ok := expect["result"]; ok {
					if problem := contains(generic, want, "result"); problem != "" {
						t.Fatalf("%s: %s", where, problem)
					}
				}
				if step.Save != "" {
					names[step.Save] = generic
				}
			}
		})
	}
}

func checkError(t *testing.T, where string, err error, expect map[string]any) {
	t.Helper()
	var base *Error
	if !errors.As(err, &base) {
		t.Fatalf("%s: %v", where, err)
	}
	name, ok := expect["error"].(string)
	if !ok {
		t.Fatalf("%s: unexpected %v %v", where, err, base.Body)
	}
	var revoked *ConnectionRevokedError
	var attention *AttentionRequiredError
	var notActive *ConnectionNotActiveError
	matches := map[string]bool{
		// Go has one type for any other answer, from the gateway or not.
		"AtriumError":         err == error(base),
		"GatewayError":        err == error(base),
		"ConnectionRevoked":   errors.As(err, &revoked),
		"AttentionRequired":   errors.As(err, &attention),
		"ConnectionNotActive": errors.As(err, &notActive),
	}
	if !matches[name] {
		t.Fatalf("%s: %T is not %s", where, err, name)
	}
	if float64(base.Status) != expect["status"] {
		t.Fatalf("%s: status %d, want %v", where, base.Status, expect["status"])
	}
	if want, ok := expect["body"]; ok {
		if problem := contains(base.Body, want, "body"); problem != "" {
			t.Fatalf("%s: %s", where, problem)
		}
	}
}

// callStep maps a case's call name onto this SDK's method.
func callStep(ctx context.Context, gateway *GatewayClient, memory *MemoryClient, chat *ChatClient, call string, a map[string]any) (any, error) {
	str := func(name string) string { v, _ := a[name].(string); return v }
	ws := InWorkspace(str("workspace_id"))
	switch call {
	case "gateway.capture_credential":
		return gateway.CaptureCredential(ctx, CaptureCredentialInput{ProviderID: str("provider_id"), WorkspaceID: str("workspace_id"),
			APIKey: str("api_key"), Username: str("username"), Password: str("password")})
	case "gateway.get_capture_schema":
		return gateway.GetCaptureSchema(ctx, str("provider_id"))
	case "gateway.get_token":
		return gateway.GetToken(ctx, str("connection_id"), ws)
	case "gateway.refresh_connection":
		return gateway.RefreshConnection(ctx, str("connection_id"), ws)
	case "gateway.revoke_connection":
		return gateway.RevokeConnection(ctx, str("connection_id"), ws, WithReason(str("reason")))
	case "gateway.get_connection":
		return gateway.GetConnection(ctx, str("connection_id"), ws)
	case "gateway.list_connections":
		return gateway.ListConnections(ctx, ws)
	case "gateway.start_connection":
		return gateway.StartConnection(ctx, StartConnectionInput{ProviderID: str("provider_id"), WorkspaceID: str("workspace_id"), ReturnURL: str("return_url")})
	case "gateway.create_agent":
		metadata := map[string]string{}
		given, _ := a["metadata"].(map[string]any)
		for k, v := range given {
			metadata[k] = v.(string)
		}
		return gateway.CreateAgent(ctx, CreateAgentInput{WorkspaceID: str("workspace_id"), Name: str("name"), Description: str("description"), Metadata: metadata})
	case "gateway.get_agent":
		return gateway.GetAgent(ctx, str("agent_id"), ws)
	case "gateway.list_agents":
		return gateway.ListAgents(ctx, str("workspace_id"))
	case "gateway.disable_agent":
		return gateway.DisableAgent(ctx, str("agent_id"), ws)
	case "gateway.create_agent_session":
		return gateway.CreateAgentSession(ctx, CreateAgentSessionInput{AgentID: str("agent_id"), ConnectionID: str("connection_id"), WorkspaceID: str("workspace_id")})
	case "gateway.get_agent_session":
		return gateway.GetAgentSession(ctx, str("session_id"))
	case "gateway.create_webhook", "gateway.update_webhook":
		input := WebhookInput{Name: str("name"), URL: str("url"), Secret: str("secret")}
		events, _ := a["event_types"].([]any)
		for _, event := range events {
			input.EventTypes = append(input.EventTypes, event.(string))
		}
		if enabled, ok := a["enabled"].(bool); ok {
			input.Enabled = &enabled
		}
		if description, ok := a["description"].(string); ok {
			input.Description = &description
		}
		if call == "gateway.create_webhook" {
			return gateway.CreateWebhook(ctx, input)
		}
		return gateway.UpdateWebhook(ctx, str("webhook_id"), input)
	case "gateway.list_webhooks":
		return gateway.ListWebhooks(ctx)
	case "gateway.get_webhook":
		return gateway.GetWebhook(ctx, str("webhook_id"))
	case "gateway.delete_webhook":
		return gateway.DeleteWebhook(ctx, str("webhook_id"))
	case "gateway.list_webhook_deliveries":
		limit, _ := a["limit"].(float64)
		offset, _ := a["offset"].(float64)
		return gateway.ListWebhookDeliveries(ctx, str("webhook_id"), WebhookDeliveryQuery{Status: str("status"), Limit: int(limit), Offset: int(offset)})
	case "gateway.rotate_webhook_secret":
		var options []CallOption
		if seconds, ok := a["overlap_seconds"].(float64); ok {
			options = append(options, WithOverlap(time.Duration(seconds)*time.Second))
		}
		return gateway.RotateWebhookSecret(ctx, str("webhook_id"), options...)
	case "gateway.redeliver_webhook":
		return gateway.RedeliverWebhook(ctx, str("webhook_id"), str("delivery_id"))
	case "memory.create_session":
		return memory.CreateSession(ctx, CreateSessionInput{TenantID: str("tenant_id"), UserID: str("user_id"), AgentID: str("agent_id")})
	case "memory.store_interaction":
		return memory.StoreInteraction(ctx, str("session_id"), InteractionInput{UserMessage: str("user_message"), AgentResponse: str("agent_response")})
	case "memory.store_event":
		return memory.StoreEvent(ctx, str("session_id"), EventInput{Type: str("type"), Role: str("role"), Content: str("content")})
	case "memory.get_context":
		limit, _ := a["limit"].(float64)
		return memory.GetContext(ctx, str("session_id"), ContextQuery{Limit: int(limit)})
	case "chat.send":
		return chat.Send(ctx, ChatRequest{Message: str("message"), WorkflowID: str("workflow_id")})
	case "chat.history":
		return chat.History(ctx, str("workflow_id"), str("step_id"))
	}
	return nil, fmt.Errorf("no method for %s", call)
}

// resolve replaces "$name.field" strings with the named values.
func resolve(value any, names map[string]any) any {
	switch v := value.(type) {
	case string:
		if !strings.HasPrefix(v, "$") {
			return v
		}
		var found any = names
		for _, part := range strings.Split(v[1:], ".") {
			if list, ok := found.([]any); ok {
				index, _ := strconv.Atoi(part)
				found = list[index]
				continue
			}
			found = found.(map[string]any)[part]
		}
		return found
	case map[string]any:
		out := map[string]any{}
		for k, item := range v {
			out[k] = resolve(item, names)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = resolve(item, names)
		}
		return out
	}
	return value
}

// contains says why actual lacks expected's fields ("" when it has them all).
func contains(actual, expected any, path string) string {
	switch want := expected.(type) {
	case string:
		if want == "<any>" {
			if actual == nil || actual == "" {
				return path + " is empty"
			}
			return ""
		}
		if want == "<none>" {
			if actual != nil && actual != "" {
				return fmt.Sprintf("%s is %v, want none", path, actual)
			}
			return ""
		}
	case map[string]any:
		object, ok := actual.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is %v, not an object", path, actual)
		}
		for key, item := range want {
			if problem := contains(object[key], item, path+"."+key); problem != "" {
				return problem
			}
		}
		return ""
	case []any:
		list, ok := actual.([]any)
		if !ok || len(list) != len(want) {
			return fmt.Sprintf("%s is %v, want %d items", path, actual, len(want))
		}
		for i := range want {
			if problem := contains(list[i], want[i], fmt.Sprintf("%s[%d]", path, i)); problem != "" {
				return problem
			}
		}
		return ""
	}
	if !reflect.DeepEqual(actual, expected) {
		return fmt.Sprintf("%s is %v, want %v", path, actual, expected)
	}
	return ""
}
