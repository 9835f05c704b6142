package atrium

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestConnectionAnswersMapOntoTypedErrors(t *testing.T) {
	cases := []struct {
		status int
		body   string
		check  func(error) bool
	}{
		{409, `{"error":"attention_required"}`, func(err error) bool {
			var e *AttentionRequiredError
			return errors.As(err, &e) && e.ConnectionID == "c-1"
		}},
		{410, `{"code":"connection_revoked"}`, func(err error) bool {
			var e *ConnectionRevokedError
			return errors.As(err, &e) && e.ConnectionID == "c-1"
		}},
		{400, `{"code":"connection_not_active"}`, func(err error) bool { var e *ConnectionNotActiveError; return errors.As(err, &e) }},
		{404, `{"code":"not_found"}`, func(err error) bool { _, plain := err.(*Error); return plain }},
		{409, `{"error":"conflict"}`, func(err error) bool { _, plain := err.(*Error); return plain }},
		{502, `bad gateway`, func(err error) bool { var e *Error; return errors.As(err, &e) && e.Body == "bad gateway" }},
	}
	for _, c := range cases {
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		gateway, _ := NewGatewayClient(server.URL)
		_, err := gateway.GetToken(context.Background(), "c-1")
		server.Close()
		var base *Error
		if !c.check(err) || !errors.As(err, &base) || base.Status != c.status {
			t.Errorf("%d %s: got %#v", c.status, c.body, err)
		}
	}
}

func TestRequestsCarryTheAPIKeyWorkspaceAndEscapedIDs(t *testing.T) {
	var seen *http.Request
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		io.WriteString(w, `{"connection_id":"a/b","revoked_at":"2026-01-01T00:00:00Z"}`)
	}))
	defer server.Close()
	gateway, _ := NewGatewayClient(server.URL, WithAPIKey("k"))
	result, err := gateway.RevokeConnection(context.Background(), "a/b", InWorkspace("ws"), WithReason("done"))
	if err != nil || result.RevokedAt == "" {
		t.Fatal(result, err)
	}
	if seen.Method != "DELETE" || seen.URL.RawPath != "/v1/connections/a%2Fb" || seen.URL.RawQuery != "reason=done&workspace_id=ws" {
		t.Errorf("%s %s?%s", seen.Method, seen.URL.RawPath, seen.URL.RawQuery)
	}
	if seen.Header.Get("X-API-Key") != "k" || !strings.HasPrefix(seen.Header.Get("User-Agent"), "atrium-sdk-go/") {
		t.Errorf("headers %v", seen.Header)
	}
}

func TestOneTokenRequestInFlightPerConnection(t *testing.T) {
	var calls int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(&calls, 1)
		time.Sleep(100 * time.Millisecond)
		json.NewEncoder(w).Encode(ConnectionToken{ConnectionID: r.URL.Path, AccessToken: "at"})
	}))
	defer server.Close()
	gateway, _ := NewGatewayClient(server.URL)
	var wg sync.WaitGroup
	for _, id := range []string{"a", "a", "b", "a", "b"} {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			token, err := gateway.GetToken(context.Background(), id)
			if err != nil || token.ConnectionID != "/v1/token/"+id {
				t.Error(token, err)
			}
		}(id)
	}
	wg.Wait()
	if calls != 2 {
		t.Fatalf("%d token requests, want 2", calls)
	}
	if _, err := gateway.GetToken(context.Background(), "a"); err != nil || calls != 2 {
		t.Fatal("a cached token was fetched again", err)
	}
	if _, err := gateway.GetToken(context.Background(), "a", BypassCache()); err != nil || calls != 3 {
		t.Fatal("BypassCache did not ask the gateway", err)
	}
}

func TestTokenCacheHonoursExpiryEarlyAndStaticTTL(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cache := newTokenCache(30*time.Second, time.Minute, func() time.Time { return now })
	fetches := 0
	fetch := func(expiresAt string) func() (*ConnectionToken, error) {
		return func() (*ConnectionToken, error) { fetches++; return &ConnectionToken{ExpiresAt: expiresAt}, nil }
	}
	cache.get("oauth", false, fetch("2026-01-01T12:01:00.123456789Z"))
	cache.get("static", false, fetch(""))
	now = now.Add(30 * time.Second)
	cache.get("oauth", false, fetch("x"))
	cache.get("static", false, fetch("x"))
	if fetches != 2 {
		t.Fatalf("%d fetches before expiry, want 2", fetches)
	}
	now = now.Add(time.Second)
	cache.get("oauth", false, fetch(""))
	if fetches != 3 {
		t.Fatal("a token within the skew of its expiry was served")
	}
	now = now.Add(30 * time.Second)
	cache.get("static", false, fetch(""))
	if fetches != 4 {
		t.Fatal("a static credential outlived the static TTL")
	}
	failing := func() (*ConnectionToken, error) { fetches++; return nil, errors.New("down") }
	if _, err := cache.get("oauth", true, failing); err == nil {
		t.Fatal("the error was lost")
	}
	cache.get("oauth", false, fetch(""))
	if fetches != 6 {
		t.Fatal("a failed fetch left the old token cached")
	}
}

// A gateway whose refresh rotates the access token, and a resource that accepts only at-2.
func oauthWorld(t *testing.T) (gateway *GatewayClient, resource string, refreshes *int32, seen *[]string) {
	var generation int32 = 1
	refreshes, seen = new(int32), new([]string)
	var mu sync.Mutex
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/refresh/") {
			atomic.AddInt32(refreshes, 1)
			atomic.AddInt32(&generation, 1)
			io.WriteString(w, `{"status":"active"}`)
			return
		}
		json.NewEncoder(w).Encode(ConnectionToken{ConnectionID: "c", AuthType: "oauth2", TokenType: "bearer", APIKey: "k",
			AccessToken: "at-" + string(rune('0'+atomic.LoadInt32(&generation))), Strategy: &CredentialStrategy{Type: "oauth2"}})
	}))
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		*seen = append(*seen, r.Header.Get("Authorization")+" "+string(body))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer at-2" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(gw.Close)
	t.Cleanup(api.Close)
	gateway, _ = NewGatewayClient(gw.URL)
	return gateway, api.URL, refreshes, seen
}

func TestTransportRefreshesOnceOn401AndResendsTheBody(t *testing.T) {
	gateway, resource, refreshes, seen := oauthWorld(t)
	res, err := gateway.HTTPClient("c").Post(resource, "text/plain", strings.NewReader("payload"))
	if err != nil || res.StatusCode != 200 {
		t.Fatal(res, err)
	}
	if *refreshes != 1 || strings.Join(*seen, "|") != "Bearer at-1 payload|Bearer at-2 payload" {
		t.Fatalf("refreshes %d, seen %q", *refreshes, *seen)
	}
	res, err = gateway.HTTPClient("c", WithStrategy(CredentialStrategy{Type: "api_key"})).Get(resource)
	if err != nil || res.StatusCode != 401 || *refreshes != 1 {
		t.Fatal("a non-oauth2 strategy was refreshed")
	}
}

func TestTransportCanBeToldNotToRetry(t *testing.T) {
	gateway, resource, refreshes, _ := oauthWorld(t)
	res, err := gateway.HTTPClient("c", WithoutRefreshOnUnauthorized()).Get(resource)
	if err != nil || res.StatusCode != 401 || *refreshes != 0 {
		t.Fatal(res, err, *refreshes)
	}
}

// PATCH merges what is sent: unset fields stay out of the body, an explicit false does not.
func TestUpdateWebhookSendsOnlyTheFieldsSet(t *testing.T) {
	var method, path string
	var body map[string]any
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, path = r.Method, r.URL.EscapedPath()
		json.NewDecoder(r.Body).Decode(&body)
		io.WriteString(w, `{"id":"wh/1","enabled":false}`)
	}))
	defer server.Close()
	gateway, _ := NewGatewayClient(server.URL)
	disabled := false
	webhook, err := gateway.UpdateWebhook(context.Background(), "wh/1", WebhookInput{Enabled: &disabled})
	if err != nil || webhook.Enabled {
		t.Fatalf("got %#v, %v", webhook, err)
	}
	if method != "PATCH" || path != "/v1/webhooks/wh%2F1" {
		t.Errorf("sent %s %s", method, path)
	}
	if len(body) != 1 || body["enabled"] != false {
		t.Errorf("sent body %v", body)
	}
}
