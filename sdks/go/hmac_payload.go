package atrium

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// DefaultSignatureHeader carries hmac_payload signatures unless the strategy names another.
const DefaultSignatureHeader = "X-Signature"

// SignPayload is HMAC-SHA256 of the exact body bytes, hex, after prefix (GitHub/Stripe-style).
func SignPayload(body []byte, secret, prefix string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return prefix + hex.EncodeToString(mac.Sum(nil))
}
