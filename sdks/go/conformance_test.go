package atrium

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The cross-language vectors of sdks/conformance/injection.json (the TS and Python SDKs run them).
type injectionCase struct {
	Name    string          `json:"name"`
	Token   ConnectionToken `json:"token"`
	Request struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    *string           `json:"body"`
	} `json:"request"`
	SigningDate string `json:"signing_date"`
	Expect      struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Error   bool              `json:"error"`
	} `json:"expect"`
}

func TestInjectionConformance(t *testing.T) {
	raw, err := os.ReadFile("../conformance/injection.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Cases []injectionCase }
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range file.Cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			var body io.Reader
			if c.Request.Body != nil {
				body = strings.NewReader(*c.Request.Body)
			}
			req, err := http.NewRequest(c.Request.Method, c.Request.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			for name, value := range c.Request.Headers {
				req.Header.Set(name, value)
			}
			var options []InjectOption
			if c.SigningDate != "" {
				when, err := time.Parse(time.RFC3339, c.SigningDate)
				if err != nil {
					t.Fatal(err)
				}
				options = append(options, WithSigningTime(when))
			}
			out, err := InjectCredential(req, &c.Token, nil, options...)
			if c.Expect.Error {
				if err == nil {
					t.Fatal("expected an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			headers := map[string]string{}
			for name, values := range out.Header {
				headers[strings.ToLower(name)] = strings.Join(values, ", ")
			}
			if out.URL.String() != c.Expect.URL {
				t.Errorf("url %s, want %s", out.URL, c.Expect.URL)
			}
			if !reflect.DeepEqual(headers, c.Expect.Headers) {
				t.Errorf("headers\n got %v\nwant %v", headers, c.Expect.Headers)
			}
			if c.Request.Body != nil {
				sent, _ := io.ReadAll(out.Body)
				if !bytes.Equal(sent, []byte(*c.Request.Body)) {
					t.Errorf("body %q changed", sent)
				}
			}
		})
	}
}
