package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
)

// fetchURL returns the status and body of url.
func fetchURL(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// While starting, /healthz answers, /readyz and the cache's routes answer 503 naming the
// check under way; once open, the real handlers and readiness take over.
func TestStartingServesHealthzAndSaysWhyNotReady(t *testing.T) {
	state := newStarting("checking that the API server answers")
	srv := httptest.NewServer(newServer("/metrics", "", state.handlers(), state.readiness, false).Handler)
	t.Cleanup(srv.Close)

	if code, body := fetchURL(t, srv.URL+healthzPath); code != http.StatusOK {
		t.Errorf("/healthz while starting: %d %q, want 200", code, body)
	}
	for _, path := range []string{readyzPath, "/metrics", "/leases"} {
		code, body := fetchURL(t, srv.URL+path)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "starting: checking that the API server answers") {
			t.Errorf("%s while starting: %d %q, want 503 naming the check", path, code, body)
		}
	}
	state.enter("discovering LeaseCandidates")
	if _, body := fetchURL(t, srv.URL+readyzPath); !strings.Contains(body, "starting: discovering LeaseCandidates") {
		t.Errorf("/readyz after the phase changed: %q", body)
	}

	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "metrics\n") })
	state.open(handlers{metrics: metrics, leases: metrics}, func() error { return nil })
	if code, body := fetchURL(t, srv.URL+"/metrics"); code != http.StatusOK || body != "metrics\n" {
		t.Errorf("/metrics once open: %d %q, want the real handler's answer", code, body)
	}
	if code, body := fetchURL(t, srv.URL+readyzPath); code != http.StatusOK {
		t.Errorf("/readyz once open and ready: %d %q", code, body)
	}
}

// An API server that holds every request (as a full queue-type API Priority and Fairness
// level does): the command serves /healthz at once and /readyz names the reachability check
// throughout, and still exits with code 4 once --kube.reach-timeout passes.
func TestHealthzAnswersWhileTheAPIServerHoldsTheStart(t *testing.T) {
	release := make(chan struct{})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "released", http.StatusServiceUnavailable)
	}))
	t.Cleanup(api.Close)
	t.Cleanup(func() { close(release) })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+api.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := exporterproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	const reach = 3 * time.Second
	logs := &syncbuffer.Buffer{}
	started := time.Now()
	code := make(chan int, 1)
	go func() {
		code <- realMain([]string{"--kubeconfig", kubeconfig, "--web.listen-address", addr, "--kube.reach-timeout", reach.String()}, io.Discard, logs)
	}()

	healthy := false
	for time.Since(started) < reach-time.Second {
		resp, err := http.Get("http://" + addr + healthzPath)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz during the start-up checks: %s, want 200", resp.Status)
		}
		healthy = true
		break
	}
	if !healthy {
		t.Fatalf("/healthz did not answer within %s while the API server held the start:\n%s", reach-time.Second, logs)
	}
	if status, body := fetchURL(t, "http://"+addr+readyzPath); status != http.StatusServiceUnavailable ||
		!strings.Contains(body, "starting: checking that the API server "+api.URL+" answers") {
		t.Errorf("/readyz during the reachability check: %d %q, want 503 naming it", status, body)
	}
	select {
	case c := <-code:
		if c != exitUnreachable {
			t.Errorf("exit code %d, want %d (unreachable); log:\n%s", c, exitUnreachable, logs)
		}
	case <-time.After(reach + 10*time.Second):
		t.Fatalf("still running %s after --kube.reach-timeout %s", time.Since(started), reach)
	}
	if _, err := http.Get("http://" + addr + healthzPath); err == nil {
		t.Error("/healthz still answers after the exporter gave up")
	}
}
