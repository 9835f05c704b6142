package atrium

import (
	"encoding/json"
	"fmt"
)

// Error is any non-2xx answer from an Atrium service. Body is the parsed JSON (or the raw text).
// The typed connection errors unwrap to it, so errors.As(err, new(*Error)) sees every failure.
type Error struct {
	Status int
	Body   any
	// Code is `error` (or `code`) of a JSON error body, when there is one.
	Code string
}

func (e *Error) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, describe(e.Body)) }

// AttentionRequiredError is 409 attention_required: the provider refused a refresh (invalid_grant,
// MFA, CAPTCHA). Retrying cannot help; a human has to redo the consent.
type AttentionRequiredError struct {
	ConnectionID string
	Err          *Error
}

func (e *AttentionRequiredError) Error() string {
	return fmt.Sprintf("connection %s needs a human to redo the consent", e.ConnectionID)
}
func (e *AttentionRequiredError) Unwrap() error { return e.Err }

// ConnectionRevokedError is 410 connection_revoked: terminal; start a new connection flow.
type ConnectionRevokedError struct {
	ConnectionID string
	Err          *Error
}

func (e *ConnectionRevokedError) Error() string {
	return fmt.Sprintf("connection %s was revoked; start a new connection flow", e.ConnectionID)
}
func (e *ConnectionRevokedError) Unwrap() error { return e.Err }

// ConnectionNotActiveError is 400 connection_not_active: neither active nor revoked (e.g. failed).
type ConnectionNotActiveError struct {
	ConnectionID string
	Err          *Error
}

func (e *ConnectionNotActiveError) Error() string {
	return fmt.Sprintf("connection %s is not active: %s", e.ConnectionID, describe(e.Err.Body))
}
func (e *ConnectionNotActiveError) Unwrap() error { return e.Err }

// newError reads an error body: JSON when it parses, the text otherwise.
func newError(status int, raw []byte) *Error {
	e := &Error{Status: status}
	if len(raw) == 0 {
		return e
	}
	var parsed any
	if json.Unmarshal(raw, &parsed) != nil {
		e.Body = string(raw)
		return e
	}
	e.Body = parsed
	if object, ok := parsed.(map[string]any); ok {
		if code, ok := object["error"].(string); ok {
			e.Code = code
		} else if code, ok := object["code"].(string); ok {
			e.Code = code
		}
	}
	return e
}

// gatewayError picks the typed error for an answer about one connection.
func gatewayError(e *Error, connectionID string) error {
	if connectionID == "" {
		return e
	}
	switch {
	case e.Status == 409 && e.Code == "attention_required":
		return &AttentionRequiredError{ConnectionID: connectionID, Err: e}
	case e.Status == 410 && e.Code == "connection_revoked":
		return &ConnectionRevokedError{ConnectionID: connectionID, Err: e}
	case e.Status == 400 && e.Code == "connection_not_active":
		return &ConnectionNotActiveError{ConnectionID: connectionID, Err: e}
	}
	return e
}

func describe(body any) string {
	switch b := body.(type) {
	case nil:
		return ""
	case string:
		if len(b) > 200 {
			return b[:200]
		}
		return b
	case map[string]any:
		if message, ok := b["message"].(string); ok {
			return message
		}
	}
	text, _ := json.Marshal(body)
	if len(text) > 200 {
		text = text[:200]
	}
	return string(text)
}
