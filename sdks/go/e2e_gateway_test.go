package atrium

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const goWorkspace = "ws-go"

// oidc-provider → broker → gateway → this SDK, all real and on loopback.
func TestE2EOAuthConnectionLifecycle(t *testing.T) {
	s := needServices(t)
	ctx := context.Background()
	gateway, err := NewGatewayClient(s.Gateway, WithAPIKey(s.GatewayAPIKey))
	if err != nil {
		t.Fatal(err)
	}
	started, err := gateway.StartConnection(ctx, StartConnectionInput{
		ProviderID: s.Providers["oauth2"], WorkspaceID: goWorkspace, ReturnURL: "http://localhost:3000/connected",
	})
	if err != nil {
		t.Fatal(err)
	}
	connectionID := s.authorize(t, started.AuthorizationURL)
	ws := InWorkspace(goWorkspace)

	token, err := gateway.GetToken(ctx, connectionID, ws)
	if err != nil || token.Strategy == nil || token.Strategy.Type != "oauth2" || token.AccessToken == "" {
		t.Fatal(token, err)
	}
	if again, _ := gateway.GetToken(ctx, connectionID, ws); again != token {
		t.Error("the second GetToken was not served from the cache")
	}
	client := gateway.HTTPClient(connectionID, ForWorkspace(goWorkspace))
	res, err := client.Get(s.Resource + "/data")
	if err != nil || res.StatusCode != 200 {
		t.Fatal(res, err)
	}
	var data map[string]string
	json.NewDecoder(res.Body).Decode(&data)
	res.Body.Close()
	if data["resource"] != "secret-data" || data["user"] != "user-1" {
		t.Errorf("resource answered %v", data)
	}

	connection, err := gateway.GetConnection(ctx, connectionID, ws)
	if err != nil || connection.Status != "active" || connection.ProviderID != s.Providers["oauth2"] {
		t.Fatal(connection, err)
	}
	connections, err := gateway.ListConnections(ctx, ws)
	if err != nil || len(connections) == 0 {
		t.Fatal(connections, err)
	}
	var notFound *Error
	if _, err := gateway.GetConnection(ctx, connectionID, InWorkspace("ws-elsewhere")); !errors.As(err, &notFound) || notFound.Status != 404 {
		t.Errorf("another workspace: %v", err)
	}

	agent, err := gateway.CreateAgent(ctx, CreateAgentInput{WorkspaceID: goWorkspace, Name: "agent-go", Metadata: map[string]string{"lang": "go"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := gateway.GetAgent(ctx, agent.ID, ws); err != nil || got.Metadata["lang"] != "go" {
		t.Fatal(got, err)
	}
	session, err := gateway.CreateAgentSession(ctx, CreateAgentSessionInput{AgentID: agent.ID, ConnectionID: connectionID, WorkspaceID: goWorkspace})
	if err != nil || session.Status != "open" {
		t.Fatal(session, err)
	}
	if _, err := gateway.CreateAgentSession(ctx, CreateAgentSessionInput{AgentID: "never-registered", ConnectionID: connectionID, WorkspaceID: goWorkspace}); !errors.As(err, &notFound) || notFound.Status != 404 {
		t.Errorf("unknown agent: %v", err)
	}

	// The stored token expires: retrieval refreshes it at the provider, so does an explicit refresh.
	s.control(t, "POST", "/expire", map[string]string{"connection_id": connectionID}, nil)
	renewed, err := gateway.GetToken(ctx, connectionID, ws, BypassCache())
	if err != nil || renewed.AccessToken == token.AccessToken {
		t.Fatal("expired token was not renewed", err)
	}
	if refreshed, err := gateway.RefreshConnection(ctx, connectionID, ws); err != nil || refreshed.Status != "active" {
		t.Fatal(refreshed, err)
	}
	latest, err := gateway.GetToken(ctx, connectionID, ws)
	if err != nil || latest.AccessToken == renewed.AccessToken {
		t.Fatal("refresh did not rotate the token", err)
	}

	revoked, err := gateway.RevokeConnection(ctx, connectionID, ws, WithReason("go test finished"))
	if err != nil || !revoked.TokenDeleted || !revoked.ProviderRevoked {
		t.Fatal(revoked, err)
	}
	if closed, err := gateway.GetAgentSession(ctx, session.ID); err != nil || closed.Status != "closed" {
		t.Fatal(closed, err)
	}
	disabled, err := gateway.DisableAgent(ctx, agent.ID, ws)
	if err != nil || disabled.DisabledAt == "" {
		t.Fatal(disabled, err)
	}
	agents, err := gateway.ListAgents(ctx, goWorkspace)
	if err != nil || len(agents) != 1 || agents[0].DisabledAt != disabled.DisabledAt {
		t.Fatal(agents, err)
	}
	var gone *ConnectionRevokedError
	if _, err := gateway.GetToken(ctx, connectionID, ws); !errors.As(err, &gone) || gone.Err.Status != 410 || gone.Err.Code != "connection_revoked" {
		t.Errorf("token after revocation: %v", err)
	}
	if _, err := gateway.RefreshConnection(ctx, connectionID, ws); !errors.As(err, &gone) {
		t.Errorf("refresh after revocation: %v", err)
	}
	if _, err := client.Get(s.Resource + "/data"); !errors.As(err, &gone) {
		t.Errorf("transport after revocation: %v", err)
	}
	if again, err := gateway.RevokeConnection(ctx, connectionID, ws); err != nil || again.RevokedAt != revoked.RevokedAt {
		t.Errorf("repeat revocation: %v %v", again, err)
	}
}

type echoed struct {
	Query   map[string]string `json:"query"`
	Headers map[string]string `json:"headers"`
}

func TestE2EStaticCredentialsAreInjectedPerStrategy(t *testing.T) {
	s := needServices(t)
	ctx := context.Background()
	gateway, _ := NewGatewayClient(s.Gateway, WithAPIKey(s.GatewayAPIKey))
	schema, err := gateway.GetCaptureSchema(ctx, s.Providers["api_key"])
	if err != nil || len(schema.Fields) != 1 || schema.Fields[0].Name != "api_key" {
		t.Fatal(schema, err)
	}
	send := func(strategy string, credential CaptureCredentialInput, body string) echoed {
		credential.ProviderID, credential.WorkspaceID = s.Providers[strategy], goWorkspace
		connection, err := gateway.CaptureCredential(ctx, credential)
		if err != nil || connection.Status != "active" {
			t.Fatal(strategy, connection, err)
		}
		res, err := gateway.HTTPClient(connection.ID).Post(s.Echo+"/items?limit=5", "application/json", strings.NewReader(body))
		if err != nil || res.StatusCode != 200 {
			t.Fatal(strategy, res, err)
		}
		res.Body.Close()
		var arrived echoed
		s.control(t, "GET", "/echo-last", nil, &arrived)
		return arrived
	}
	if got := send("api_key", CaptureCredentialInput{APIKey: "k-go"}, "{}").Headers["x-test-key"]; got != "Key k-go" {
		t.Errorf("api_key: %q", got)
	}
	if got := send("query_param", CaptureCredentialInput{APIKey: "q-go"}, "{}").Query; got["key"] != "q-go" || got["limit"] != "5" {
		t.Errorf("query_param: %v", got)
	}
	body := `{"order":42}`
	if got := send("hmac_payload", CaptureCredentialInput{APIKey: "whsec"}, body).Headers["x-signature"]; got != SignPayload([]byte(body), "whsec", "sha256=") {
		t.Errorf("hmac_payload: %q", got)
	}
	if got := send("basic_auth", CaptureCredentialInput{Username: "ada", Password: "pw"}, "{}").Headers["authorization"]; got != "Basic "+base64.StdEncoding.EncodeToString([]byte("ada:pw")) {
		t.Errorf("basic_auth: %q", got)
	}
	sigv4 := send("aws_sigv4", CaptureCredentialInput{Username: "AKIDEXAMPLE", Password: "secret"}, body).Headers
	digest := sha256.Sum256([]byte(body))
	if !strings.HasPrefix(sigv4["authorization"], "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") ||
		!strings.Contains(sigv4["authorization"], "/us-east-1/execute-api/aws4_request") ||
		sigv4["x-amz-content-sha256"] != hex.EncodeToString(digest[:]) {
		t.Errorf("aws_sigv4: %v", sigv4)
	}
}
