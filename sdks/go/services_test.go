package atrium

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The real Atrium services (test/sdk-services.ts), started once for the e2e tests. Without node
// or the repository's node_modules those tests skip, except under CI=true where that fails.
type services struct {
	Gateway       string            `json:"gateway"`
	GatewayAPIKey string            `json:"gateway_api_key"`
	Memory        string            `json:"memory"`
	Chat          string            `json:"chat"`
	ChatProxy     string            `json:"chat_proxy"`
	Control       string            `json:"control"`
	Echo          string            `json:"echo"`
	Webhook       string            `json:"webhook"`
	Resource      string            `json:"resource"`
	Providers     map[string]string `json:"providers"`
}

var (
	servicesOnce sync.Once
	running      *services
	runningErr   error
	skipReason   string
	fixture      *exec.Cmd
	fixtureStdin io.WriteCloser
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture != nil {
		fixtureStdin.Close() // the fixture stops its services when stdin closes
		done := make(chan struct{})
		go func() { fixture.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			fixture.Process.Kill()
		}
	}
	os.Exit(code)
}

func needServices(t *testing.T) *services {
	t.Helper()
	servicesOnce.Do(startServices)
	if skipReason != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real services required in CI: %s", skipReason)
		}
		t.Skip(skipReason)
	}
	if runningErr != nil {
		t.Fatal(runningErr)
	}
	return running
}

func startServices() {
	repo, _ := filepath.Abs("../..")
	node := os.Getenv("ATRIUM_NODE")
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			skipReason = "node is not on PATH"
			return
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "node_modules", "tsx")); err != nil {
		skipReason = "node_modules is missing: run `make install` at the repository root"
		return
	}
	var stderr bytes.Buffer
	fixture = exec.Command(node, "--conditions=atrium-source", "--import", "tsx", "test/sdk-services.ts")
	fixture.Dir = repo
	fixture.Stderr = &stderr
	stdout, _ := fixture.StdoutPipe()
	fixtureStdin, _ = fixture.StdinPipe()
	if runningErr = fixture.Start(); runningErr != nil {
		return
	}
	line := make(chan string, 1)
	go func() {
		text, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- text
	}()
	select {
	case text := <-line:
		running = &services{}
		if err := json.Unmarshal([]byte(text), running); err != nil {
			runningErr = fmt.Errorf("test/sdk-services.ts did not start: %v\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		runningErr = fmt.Errorf("test/sdk-services.ts did not start in time\n%s", stderr.String())
	}
}

// control calls the fixture's control API and decodes its answer into out.
func (s *services) control(t *testing.T, method, path string, body, out any) {
	t.Helper()
	encoded, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.Control+path, bytes.NewReader(encoded))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		raw, _ := io.ReadAll(res.Body)
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// authorize plays the user's browser through consent and returns the new connection's id.
func (s *services) authorize(t *testing.T, authorizationURL string) string {
	t.Helper()
	var landed struct {
		ConnectionID string `json:"connection_id"`
		Status       string `json:"status"`
	}
	s.control(t, "POST", "/authorize", map[string]string{"authorization_url": authorizationURL}, &landed)
	if landed.Status != "active" {
		t.Fatalf("consent landed as %+v", landed)
	}
	return landed.ConnectionID
}
