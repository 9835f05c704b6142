package atrium

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Where api_key and query_param put the key unless the strategy names another place.
const (
	DefaultAPIKeyHeader = "X-API-Key"
	DefaultQueryParam   = "api_key"
)

// CredentialError says the connection has no credential the chosen strategy can inject.
type CredentialError struct{ Message string }

func (e *CredentialError) Error() string { return e.Message }

// ResolveStrategy is override if given, else the gateway's strategy, else the natural one for
// the connection's auth type.
func ResolveStrategy(token *ConnectionToken, override *CredentialStrategy) (CredentialStrategy, error) {
	if override != nil {
		return *override, nil
	}
	if token.Strategy != nil && token.Strategy.Type != "" {
		return *token.Strategy, nil
	}
	switch token.AuthType {
	case "oauth2", "api_key", "basic_auth":
		return CredentialStrategy{Type: token.AuthType}, nil
	}
	return CredentialStrategy{}, &CredentialError{fmt.Sprintf(
		"connection %s (%s) has no credential to inject", token.ConnectionID, token.AuthType)}
}

// InjectOption adjusts InjectCredential.
type InjectOption func(*injectOptions)

type injectOptions struct{ signingTime time.Time }

// WithSigningTime fixes the aws_sigv4 signing time; the conformance vectors pin it.
func WithSigningTime(t time.Time) InjectOption {
	return func(o *injectOptions) { o.signingTime = t }
}

// InjectCredential returns a copy of req carrying the connection's credential, its body buffered
// (signing strategies need the bytes). A nil strategy means ResolveStrategy(token, nil). For the
// static strategies the secret is the captured api_key; aws_sigv4 takes the access key id as
// username and the secret key as password.
func InjectCredential(req *http.Request, token *ConnectionToken, strategy *CredentialStrategy, options ...InjectOption) (*http.Request, error) {
	var settings injectOptions
	for _, option := range options {
		option(&settings)
	}
	resolved, err := ResolveStrategy(token, strategy)
	if err != nil {
		return nil, err
	}
	out, body, err := buffered(req)
	if err != nil {
		return nil, err
	}

	switch resolved.Type {
	case "oauth2":
		accessToken, err := credentialField(token, "access_token", token.AccessToken)
		if err != nil {
			return nil, err
		}
		out.Header.Set("Authorization", authScheme(token.TokenType)+" "+accessToken)
	case "api_key":
		key, err := credentialField(token, "api_key", token.APIKey)
		if err != nil {
			return nil, err
		}
		out.Header.Set(orDefault(resolved.HeaderName, DefaultAPIKeyHeader), resolved.HeaderPrefix+key)
	case "basic_auth":
		username, err := credentialField(token, "username", token.Username)
		if err != nil {
			return nil, err
		}
		pair := base64.StdEncoding.EncodeToString([]byte(username + ":" + token.Password))
		out.Header.Set("Authorization", "Basic "+pair)
	case "query_param":
		key, err := credentialField(token, "api_key", token.APIKey)
		if err != nil {
			return nil, err
		}
		target := *out.URL
		target.RawQuery = setQueryParam(target.RawQuery, orDefault(resolved.ParamName, DefaultQueryParam), key)
		out.URL = &target
	case "hmac_payload":
		secret, err := credentialField(token, "api_key", token.APIKey)
		if err != nil {
			return nil, err
		}
		out.Header.Set(orDefault(resolved.HeaderName, DefaultSignatureHeader), SignPayload(body, secret, resolved.HeaderPrefix))
	case "aws_sigv4":
		if resolved.Region == "" || resolved.Service == "" {
			return nil, &CredentialError{"aws_sigv4 needs the strategy's region and service"}
		}
		accessKeyID, err := credentialField(token, "username", token.Username)
		if err != nil {
			return nil, err
		}
		secret, err := credentialField(token, "password", token.Password)
		if err != nil {
			return nil, err
		}
		SignSigV4(out.Method, out.URL, out.Header, body, SigV4Options{
			Region:      resolved.Region,
			Service:     resolved.Service,
			Credentials: AWSCredentials{AccessKeyID: accessKeyID, SecretAccessKey: secret},
			SigningTime: settings.signingTime,
		})
	default:
		return nil, &CredentialError{fmt.Sprintf("unknown credential strategy %q", resolved.Type)}
	}
	return out, nil
}

// buffered returns a copy of req whose body can be read any number of times, and the body.
func buffered(req *http.Request) (*http.Request, []byte, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, nil, err
	}
	out := req.Clone(req.Context())
	if body == nil {
		out.Body, out.GetBody, out.ContentLength = http.NoBody, nil, 0
		return out, nil, nil
	}
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.Body, _ = out.GetBody()
	out.ContentLength = int64(len(body))
	return out, body, nil
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		fresh, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer fresh.Close()
		return io.ReadAll(fresh)
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

func credentialField(token *ConnectionToken, name, value string) (string, error) {
	if value == "" {
		return "", &CredentialError{fmt.Sprintf("connection %s has no %s for this strategy", token.ConnectionID, name)}
	}
	return value, nil
}

// authScheme: token endpoints often say "bearer"; some APIs accept only RFC 6750's spelling.
func authScheme(tokenType string) string {
	if tokenType == "" || strings.EqualFold(tokenType, "bearer") {
		return "Bearer"
	}
	return tokenType
}

func orDefault(value, fallback string) string {
	if value == "" {
		return fallback
	}
	return value
}

// setQueryParam replaces the first name= pair in place (dropping later ones) or appends it, and
// serialises like URLSearchParams, so every SDK sends the same URL.
func setQueryParam(raw, name, value string) string {
	var pairs []string
	replaced := false
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		key, val, _ := strings.Cut(pair, "=")
		key, _ = url.QueryUnescape(key)
		val, _ = url.QueryUnescape(val)
		if key == name {
			if replaced {
				continue
			}
			replaced = true
			val = value
		}
		pairs = append(pairs, formEscape(key)+"="+formEscape(val))
	}
	if !replaced {
		pairs = append(pairs, formEscape(name)+"="+formEscape(value))
	}
	return strings.Join(pairs, "&")
}

func formEscape(value string) string { return escape(value, "*-._", true) }
