package atrium

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// clientSettings are what the memory and chat options set.
type clientSettings struct {
	headers http.Header
	client  *http.Client
}

// newServiceWith applies a client's options (chat's or memory's) and binds the service.
func newServiceWith[O ~func(*clientSettings)](baseURL string, options []O) (*service, error) {
	s := clientSettings{headers: http.Header{}}
	for _, option := range options {
		option(&s)
	}
	return newService(baseURL, s.headers, s.client)
}

// service is an http.Client bound to one service's base URL and headers.
type service struct {
	base    *url.URL
	headers http.Header
	http    *http.Client
}

func newService(baseURL string, headers http.Header, client *http.Client) (*service, error) {
	// A trailing slash keeps a base path (http://host/api/v1/) when paths are resolved against it.
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	headers.Set("User-Agent", userAgent)
	return &service{base: base, headers: headers, http: client}, nil
}

// request builds a request to the service; path segments must already be escaped with seg.
func (s *service) request(ctx context.Context, method, path string, query url.Values, body any) (*http.Request, error) {
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(encoded)
	}
	target := s.base.String() + path
	if encoded := query.Encode(); encoded != "" {
		target += "?" + encoded
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return nil, err
	}
	for name, values := range s.headers {
		req.Header[name] = values
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// call sends JSON and decodes the JSON answer into out; a non-2xx answer becomes an *Error, which
// errorFor may turn into a typed one.
func (s *service) call(ctx context.Context, method, path string, query url.Values, body, out any, errorFor func(*Error) error) error {
	return s.callWithHeader(ctx, method, path, query, nil, body, out, errorFor)
}

// callWithHeader is call with headers of this request only (an Idempotency-Key, say).
func (s *service) callWithHeader(ctx context.Context, method, path string, query url.Values, header http.Header, body, out any, errorFor func(*Error) error) error {
	req, err := s.request(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	for name, values := range header {
		req.Header[name] = values
	}
	res, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		failure := newError(res.StatusCode, raw)
		if errorFor != nil {
			return errorFor(failure)
		}
		return failure
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// seg escapes one path segment like encodeURIComponent, as the other SDKs do.
func seg(value string) string { return escape(value, "-_.!~*'()", false) }

// query drops empty values, as the other SDKs do.
func query(pairs ...string) url.Values {
	values := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			values.Set(pairs[i], pairs[i+1])
		}
	}
	return values
}
