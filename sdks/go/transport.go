package atrium

import (
	"io"
	"net/http"
)

// TransportOption configures GatewayClient.Transport.
type TransportOption func(*Transport)

// ForWorkspace scopes the connection's token lookups to a workspace.
func ForWorkspace(workspaceID string) TransportOption {
	return func(t *Transport) { t.workspaceID = workspaceID }
}

// WithStrategy overrides the strategy the gateway derived from the provider.
func WithStrategy(strategy CredentialStrategy) TransportOption {
	return func(t *Transport) { t.strategy = &strategy }
}

// WithoutRefreshOnUnauthorized turns off the one refresh-and-retry on a 401 of an oauth2 request.
func WithoutRefreshOnUnauthorized() TransportOption {
	return func(t *Transport) { t.refreshOnUnauthorized = false }
}

// WithBase sends the injected requests through base (default http.DefaultTransport).
func WithBase(base http.RoundTripper) TransportOption { return func(t *Transport) { t.base = base } }

// Transport is an http.RoundTripper that injects one connection's credential into every request.
// On a 401, an oauth2 connection is refreshed through the gateway and the request sent once more.
type Transport struct {
	gateway               *GatewayClient
	connectionID          string
	workspaceID           string
	strategy              *CredentialStrategy
	refreshOnUnauthorized bool
	base                  http.RoundTripper
}

// Transport returns a RoundTripper for the connection: &http.Client{Transport: gw.Transport(id)}.
func (g *GatewayClient) Transport(connectionID string, options ...TransportOption) *Transport {
	t := &Transport{gateway: g, connectionID: connectionID, refreshOnUnauthorized: true, base: http.DefaultTransport}
	for _, option := range options {
		option(t)
	}
	return t
}

// HTTPClient is an *http.Client whose requests carry the connection's credential.
func (g *GatewayClient) HTTPClient(connectionID string, options ...TransportOption) *http.Client {
	return &http.Client{Transport: g.Transport(connectionID, options...)}
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.Body != nil {
		// A RoundTripper owns the request body, sent or not.
		defer req.Body.Close()
	}
	// Buffered once: signing strategies need the bytes, and a retry must resend them.
	once, _, err := buffered(req)
	if err != nil {
		return nil, err
	}
	// The caller's own User-Agent wins; otherwise the resource sees who is calling.
	if once.Header.Get("User-Agent") == "" {
		once.Header.Set("User-Agent", userAgent)
	}
	send := func(bypass bool) (*http.Response, string, error) {
		options := []CallOption{InWorkspace(t.workspaceID)}
		if bypass {
			options = append(options, BypassCache())
		}
		token, err := t.gateway.GetToken(ctx, t.connectionID, options...)
		if err != nil {
			return nil, "", err
		}
		strategy, err := ResolveStrategy(token, t.strategy)
		if err != nil {
			return nil, "", err
		}
		prepared, err := InjectCredential(once, token, &strategy)
		if err != nil {
			return nil, "", err
		}
		res, err := t.base.RoundTrip(prepared)
		return res, strategy.Type, err
	}
	res, strategyType, err := send(false)
	if err != nil || res.StatusCode != http.StatusUnauthorized || strategyType != "oauth2" || !t.refreshOnUnauthorized {
		return res, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if _, err := t.gateway.RefreshConnection(ctx, t.connectionID, InWorkspace(t.workspaceID)); err != nil {
		return nil, err
	}
	res, _, err = send(true)
	return res, err
}
