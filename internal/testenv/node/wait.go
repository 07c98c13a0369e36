package node

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// waitFor polls ready until it succeeds, the process exits, or timeout passes.
func waitFor(ctx context.Context, p *controlplane.Process, timeout time.Duration, ready func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = ready(); last == nil {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("%s exited while starting; log %s:\n%s", p.Name(), p.LogPath(), controlplane.Tail(p.Logs(), 40))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %v; log %s:\n%s", p.Name(), timeout, last, p.LogPath(), controlplane.Tail(p.Logs(), 40))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// httpOK is a readiness check: GET url answers 200.
func httpOK(url string) func() error {
	return func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	}
}
