package atrium

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far webhook-timestamp may be from now, either way.
const DefaultWebhookTolerance = 5 * time.Minute

// ErrWebhookVerification wraps every reason VerifyWebhook rejects a request.
var ErrWebhookVerification = errors.New("webhook verification failed")

// WebhookEvent is a verified event. ID is the same on every retry: use it to deduplicate.
type WebhookEvent struct {
	ID        string                 `json:"-"`
	Type      string                 `json:"type"`
	Timestamp string                 `json:"timestamp"`
	Data      map[string]interface{} `json:"data"`
}

// VerifyWebhookOptions tunes VerifyWebhook; the zero value uses the defaults.
type VerifyWebhookOptions struct {
	// Tolerance defaults to DefaultWebhookTolerance.
	Tolerance time.Duration
	// Now defaults to time.Now (tests).
	Now func() time.Time
}

func webhookError(reason string) error {
	return &webhookVerificationError{reason}
}

type webhookVerificationError struct{ reason string }

func (e *webhookVerificationError) Error() string { return "webhook verification failed: " + e.reason }
func (e *webhookVerificationError) Unwrap() error { return ErrWebhookVerification }

// VerifyWebhook checks an Atrium webhook (Standard Webhooks): webhook-timestamp within the
// tolerance of now, and one of the space-separated "v1," signatures in webhook-signature the
// HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" under the subscription secret
// ("whsec_..."), compared in constant time. Pass the body exactly as received. Errors match
// errors.Is(err, ErrWebhookVerification).
func VerifyWebhook(secret string, header http.Header, body []byte, options VerifyWebhookOptions) (*WebhookEvent, error) {
	id := header.Get("webhook-id")
	timestamp := header.Get("webhook-timestamp")
	signatures := header.Get("webhook-signature")
	if id == "" || timestamp == "" || signatures == "" {
		return nil, webhookError("webhook-id, webhook-timestamp and webhook-signature are required")
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || seconds < 0 {
		return nil, webhookError("webhook-timestamp is invalid")
	}
	now := time.Now
	if options.Now != nil {
		now = options.Now
	}
	tolerance := options.Tolerance
	if tolerance == 0 {
		tolerance = DefaultWebhookTolerance
	}
	skew := now().Sub(time.Unix(seconds, 0))
	if skew > tolerance || skew < -tolerance {
		return nil, webhookError("webhook-timestamp is outside the tolerance")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, webhookError("the secret is not whsec_ followed by base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	valid := false
	for _, entry := range strings.Split(signatures, " ") {
		version, encoded, found := strings.Cut(entry, ",")
		// Every candidate is compared, so the time taken does not tell which one matched.
		if found && version == "v1" && hmac.Equal([]byte(encoded), expected) {
			valid = true
		}
	}
	if !valid {
		return nil, webhookError("no webhook-signature matches")
	}
	var event WebhookEvent
	if err := json.Unmarshal(body, &event); err != nil {
		return nil, webhookError("the body is not JSON")
	}
	event.ID = id
	return &event, nil
}
