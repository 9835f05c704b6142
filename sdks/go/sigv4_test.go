package atrium

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// AWS's published test-suite vectors get-vanilla and get-vanilla-query-order-key-case (signed
// without x-amz-content-sha256, as the suite does).
func TestSigV4AgainstAWSVectors(t *testing.T) {
	for _, v := range []struct{ url, signature string }{
		{"https://example.amazonaws.com/", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{"https://example.amazonaws.com/?Param2=value2&Param1=value1", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
	} {
		target, _ := url.Parse(v.url)
		header := http.Header{}
		SignSigV4("GET", target, header, nil, SigV4Options{
			Region:            "us-east-1",
			Service:           "service",
			Credentials:       AWSCredentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
			SigningTime:       time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC),
			OmitContentSHA256: true,
		})
		want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + v.signature
		if got := header.Get("Authorization"); got != want {
			t.Errorf("%s:\n got %s\nwant %s", v.url, got, want)
		}
		if header.Get("X-Amz-Date") != "20150830T123600Z" || len(header) != 2 {
			t.Errorf("headers %v", header)
		}
	}
}
