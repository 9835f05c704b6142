package atrium

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The vector the broker, TypeScript and Python tests share.
const (
	vectorSecret    = "whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="
	vectorBody      = `{"type":"connection.revoked","timestamp":"2023-11-14T22:13:20.000Z","data":{"connection_id":"c1"}}`
	vectorSignature = "v1,UOc9NW+9Rk+2njgTEut4NgEMKFBlf3kCGxMAWadfxQ4="
)

func vectorHeader(signature string) http.Header {
	header := http.Header{}
	header.Set("webhook-id", "msg_atrium_vector")
	header.Set("webhook-timestamp", "1700000000")
	header.Set("webhook-signature", signature)
	return header
}

func at(seconds int64) VerifyWebhookOptions {
	return VerifyWebhookOptions{Now: func() time.Time { return time.Unix(seconds, 0) }}
}

func TestVerifyWebhookSharedVector(t *testing.T) {
	event, err := VerifyWebhook(vectorSecret, vectorHeader(vectorSignature), []byte(vectorBody), at(1700000000))
	if err != nil {
		t.Fatal(err)
	}
	if event.ID != "msg_atrium_vector" || event.Type != "connection.revoked" ||
		event.Timestamp != "2023-11-14T22:13:20.000Z" || event.Data["connection_id"] != "c1" {
		t.Fatalf("unexpected event %+v", event)
	}
}

func TestVerifyWebhookSpecificationExample(t *testing.T) {
	header := http.Header{}
	header.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	header.Set("webhook-timestamp", "1614265330")
	header.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	if _, err := VerifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", header, []byte(`{"test": 2432232314}`), at(1614265330)); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyWebhookSeveralSignatures(t *testing.T) {
	several := "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v1a,xyz " + vectorSignature
	if _, err := VerifyWebhook(vectorSecret, vectorHeader(several), []byte(vectorBody), at(1700000000)); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyWebhookTolerance(t *testing.T) {
	for _, now := range []int64{1700000300, 1699999700} {
		if _, err := VerifyWebhook(vectorSecret, vectorHeader(vectorSignature), []byte(vectorBody), at(now)); err != nil {
			t.Fatalf("at %d: %v", now, err)
		}
	}
	for _, now := range []int64{1700000301, 1699999699} {
		_, err := VerifyWebhook(vectorSecret, vectorHeader(vectorSignature), []byte(vectorBody), at(now))
		if !errors.Is(err, ErrWebhookVerification) || !strings.Contains(err.Error(), "tolerance") {
			t.Fatalf("at %d: want a tolerance error, got %v", now, err)
		}
	}
	wide := at(1700000900)
	wide.Tolerance = 15 * time.Minute
	if _, err := VerifyWebhook(vectorSecret, vectorHeader(vectorSignature), []byte(vectorBody), wide); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyWebhookRejections(t *testing.T) {
	for _, c := range []struct {
		name, secret, body, reason string
		header                     http.Header
	}{
		{"changed body", vectorSecret, strings.Replace(vectorBody, "c1", "c2", 1), "no webhook-signature", vectorHeader(vectorSignature)},
		{"other secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", vectorBody, "no webhook-signature", vectorHeader(vectorSignature)},
		{"unknown version", vectorSecret, vectorBody, "no webhook-signature", vectorHeader("v2,abc")},
		{"missing headers", vectorSecret, vectorBody, "required", http.Header{"Webhook-Id": {"x"}}},
		{"bad secret", "whsec_!!", vectorBody, "secret", vectorHeader(vectorSignature)},
	} {
		_, err := VerifyWebhook(c.secret, c.header, []byte(c.body), at(1700000000))
		if !errors.Is(err, ErrWebhookVerification) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: want %q, got %v", c.name, c.reason, err)
		}
	}
}
