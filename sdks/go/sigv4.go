package atrium

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
)

// AWSCredentials sign aws_sigv4 requests.
type AWSCredentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// SigV4Options say where and when a request is signed.
type SigV4Options struct {
	Region, Service string
	Credentials     AWSCredentials
	// Zero means now.
	SigningTime time.Time
	// OmitContentSHA256 leaves out x-amz-content-sha256, as AWS's own test suite does; the SDKs
	// send it by default (like the AWS SDK for JavaScript).
	OmitContentSHA256 bool
}

// Headers a proxy or the transport may change or drop: never part of the signature.
var unsignable = map[string]bool{
	"authorization": true, "cache-control": true, "connection": true, "content-length": true,
	"expect": true, "from": true, "keep-alive": true, "max-forwards": true, "pragma": true,
	"referer": true, "te": true, "trailer": true, "transfer-encoding": true, "upgrade": true,
	"user-agent": true, "x-amzn-trace-id": true,
}

var whitespace = regexp.MustCompile(`\s+`)

// SignSigV4 adds X-Amz-Date (and X-Amz-Content-Sha256, X-Amz-Security-Token) and Authorization to
// header, canonicalised as the AWS SDK for JavaScript does, so the Go, Python and TypeScript SDKs
// send identical signatures (sdks/conformance/injection.json).
func SignSigV4(method string, target *url.URL, header http.Header, body []byte, options SigV4Options) {
	when := options.SigningTime
	if when.IsZero() {
		when = time.Now()
	}
	amzDate := when.UTC().Format("20060102T150405Z")
	day := amzDate[:8]
	payload := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(payload[:])

	header.Set("X-Amz-Date", amzDate)
	if options.Credentials.SessionToken != "" {
		header.Set("X-Amz-Security-Token", options.Credentials.SessionToken)
	}
	if !options.OmitContentSHA256 {
		header.Set("X-Amz-Content-Sha256", payloadHash)
	}

	signed := map[string]string{"host": target.Host}
	for name, values := range header {
		lower := strings.ToLower(name)
		if lower == "host" || unsignable[lower] || strings.HasPrefix(lower, "proxy-") || strings.HasPrefix(lower, "sec-") {
			continue
		}
		signed[lower] = strings.TrimSpace(whitespace.ReplaceAllString(strings.Join(values, ","), " "))
	}
	names := make([]string, 0, len(signed))
	for name := range signed {
		names = append(names, name)
	}
	sort.Strings(names)
	var canonicalHeaders strings.Builder
	for _, name := range names {
		canonicalHeaders.WriteString(name + ":" + signed[name] + "\n")
	}
	signedHeaders := strings.Join(names, ";")
	canonicalRequest := strings.Join([]string{
		strings.ToUpper(method),
		canonicalPath(target.EscapedPath()),
		canonicalQuery(target.RawQuery),
		canonicalHeaders.String(),
		signedHeaders,
		payloadHash,
	}, "\n")
	scope := fmt.Sprintf("%s/%s/%s/aws4_request", day, options.Region, options.Service)
	requestHash := sha256.Sum256([]byte(canonicalRequest))
	stringToSign := strings.Join([]string{"AWS4-HMAC-SHA256", amzDate, scope, hex.EncodeToString(requestHash[:])}, "\n")
	key := []byte("AWS4" + options.Credentials.SecretAccessKey)
	for _, part := range []string{day, options.Region, options.Service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	header.Set("Authorization", fmt.Sprintf(
		"AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s",
		options.Credentials.AccessKeyID, scope, signedHeaders, hex.EncodeToString(hmacSHA256(key, stringToSign)),
	))
}

func hmacSHA256(key []byte, message string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(message))
	return mac.Sum(nil)
}

// canonicalPath is the normalised path, percent-encoded once more (every service but S3).
func canonicalPath(path string) string {
	if path == "" {
		path = "/"
	}
	var segments []string
	for _, segment := range strings.Split(path, "/") {
		switch segment {
		case "", ".":
		case "..":
			if len(segments) > 0 {
				segments = segments[:len(segments)-1]
			}
		default:
			segments = append(segments, segment)
		}
	}
	normalised := strings.Join(segments, "/")
	if strings.HasPrefix(path, "/") {
		normalised = "/" + normalised
	}
	if len(segments) > 0 && strings.HasSuffix(path, "/") {
		normalised += "/"
	}
	return escape(normalised, "-_.~/", false)
}

func canonicalQuery(raw string) string {
	values, _ := url.ParseQuery(raw)
	pairs := map[string][]string{}
	for name, list := range values {
		if strings.ToLower(name) == "x-amz-signature" {
			continue
		}
		key := escape(name, "-_.~", false)
		for _, value := range list {
			pairs[key] = append(pairs[key], key+"="+escape(value, "-_.~", false))
		}
	}
	keys := make([]string, 0, len(pairs))
	for key := range pairs {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var out []string
	for _, key := range keys {
		sort.Strings(pairs[key])
		out = append(out, pairs[key]...)
	}
	return strings.Join(out, "&")
}
