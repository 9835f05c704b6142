// Package atrium is the Go client for Atrium: connection credentials through the gateway (with
// injection into outgoing requests for oauth2, api_key, basic_auth, query_param, hmac_payload and
// aws_sigv4 as an http.RoundTripper), the memory service, and the chat router's trace stream.
//
// It uses the standard library only.
package atrium
