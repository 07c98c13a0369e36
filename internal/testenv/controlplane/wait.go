package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// pollInterval is short because start-up time dominates every test.
const pollInterval = 100 * time.Millisecond

// portTakenError marks a start failure caused by a lost port race. It is a
// type rather than a sentinel variable to keep the package free of globals.
type portTakenError struct{ err error }

func (e portTakenError) Error() string { return "port already in use: " + e.err.Error() }
func (e portTakenError) Unwrap() error { return e.err }

// freePort asks the kernel for an unused loopback port. The port is free
// again once returned, so another process can grab it before ours binds;
// callers retry on portTakenError.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portTaken(err error) bool {
	var pt portTakenError
	return errors.As(err, &pt)
}

// waitHealthy polls url until it answers 200, the process exits, ctx ends
// or timeout passes. An early exit is reported with the log tail, and as
// portTakenError when the log says a port was taken.
func waitHealthy(ctx context.Context, p *Process, client *http.Client, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	lastErr := errors.New("not polled yet")
	for {
		if p.Exited() {
			err := p.exitError()
			if strings.Contains(p.Logs(), "address already in use") {
				return portTakenError{err: err}
			}
			return err
		}
		if lastErr = probe(ctx, client, url); lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			// Leave nothing half-started behind the error.
			_ = p.Kill()
			return fmt.Errorf("%s not ready at %s: %w (last probe: %w); last log lines:\n%s",
				p.Name(), url, ctx.Err(), lastErr, Tail(p.Logs(), 30))
		case <-p.Done():
		case <-ticker.C:
		}
	}
}

// probe does one GET and wants 200.
func probe(ctx context.Context, client *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, Tail(string(body), 5))
	}
	return nil
}

func plainHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// httpClientFor builds a client that authenticates like cfg.
func httpClientFor(cfg *rest.Config) (*http.Client, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("build HTTP client: %w", err)
	}
	return client, nil
}

// insecureHTTPClient is for component /healthz: components serve a
// self-signed certificate and /healthz needs no authentication.
func insecureHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe only
	}}
}

// Tail returns the last n lines of s: the end of a process log, for failure messages. The
// other test environments (node, testsuite, the test packages) use this one.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
