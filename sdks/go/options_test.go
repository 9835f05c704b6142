package atrium

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// roundTrips counts the requests a custom transport sends.
type roundTrips struct{ n int32 }

func (r *roundTrips) RoundTrip(req *http.Request) (*http.Response, error) {
	atomic.AddInt32(&r.n, 1)
	return http.DefaultTransport.RoundTrip(req)
}

func TestClientOptionsReachTheWire(t *testing.T) {
	var headers http.Header
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers = r.Header.Clone()
		io.WriteString(w, `{}`)
	}))
	defer server.Close()
	ctx := context.Background()

	counted := &roundTrips{}
	memory, _ := NewMemoryClient(server.URL, WithMemoryAPIKey("mk"), WithJWT("jwt-1"), WithMemoryHTTPClient(&http.Client{Transport: counted}))
	if _, err := memory.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if headers.Get("X-API-Key") != "mk" || headers.Get("X-JWT-Token") != "jwt-1" || counted.n != 1 {
		t.Errorf("memory options: %v, %d round trips", headers, counted.n)
	}

	chat, _ := NewChatClient(server.URL, WithHeader("Authorization", "Bearer host"), WithChatHTTPClient(&http.Client{Transport: counted}))
	if _, err := chat.Send(ctx, ChatRequest{Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	if headers.Get("Authorization") != "Bearer host" || counted.n != 2 {
		t.Errorf("chat options: %v, %d round trips", headers, counted.n)
	}

	gateway, _ := NewGatewayClient(server.URL, WithHTTPClient(&http.Client{Transport: counted}))
	if _, err := gateway.GetAgentSession(ctx, "s"); err != nil || counted.n != 3 {
		t.Errorf("WithHTTPClient: %v, %d round trips", err, counted.n)
	}
}

func TestCacheOptionsAndTransportBase(t *testing.T) {
	var tokenRequests int32
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/token/static" {
			atomic.AddInt32(&tokenRequests, 1)
			json.NewEncoder(w).Encode(ConnectionToken{ConnectionID: "static", AuthType: "api_key", APIKey: "k"})
			return
		}
		if r.URL.Path == "/v1/token/expiring" {
			atomic.AddInt32(&tokenRequests, 1)
			json.NewEncoder(w).Encode(ConnectionToken{ConnectionID: "expiring", AuthType: "oauth2", AccessToken: "at",
				ExpiresAt: now.Add(10 * time.Minute).Format(time.RFC3339)})
			return
		}
		io.WriteString(w, r.Header.Get("X-API-Key"))
	}))
	defer server.Close()
	ctx := context.Background()
	gateway, _ := NewGatewayClient(server.URL, WithClock(func() time.Time { return now }),
		WithStaticTTL(5*time.Second), WithExpirySkew(9*time.Minute))

	gateway.GetToken(ctx, "static")
	now = now.Add(4 * time.Second)
	gateway.GetToken(ctx, "static")
	if tokenRequests != 1 {
		t.Fatal("a static key was fetched again within WithStaticTTL")
	}
	now = now.Add(time.Second)
	gateway.GetToken(ctx, "static")
	gateway.GetToken(ctx, "expiring") // usable for 10 min - 9 min skew
	now = now.Add(59 * time.Second)
	gateway.GetToken(ctx, "expiring")
	if tokenRequests != 3 {
		t.Fatalf("%d token requests, want 3", tokenRequests)
	}
	now = now.Add(time.Second)
	gateway.GetToken(ctx, "expiring")
	if tokenRequests != 4 {
		t.Fatal("WithExpirySkew did not expire the token early")
	}

	counted := &roundTrips{}
	res, err := gateway.HTTPClient("static", WithBase(counted)).Get(server.URL + "/resource")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "k" || counted.n != 1 {
		t.Errorf("WithBase: body %q, %d round trips", body, counted.n)
	}
}
