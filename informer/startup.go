package informer

import (
	"net/http"

	"k8s.io/client-go/rest"
)

// startupConfig returns a copy of cfg for the start-up checks (CheckReachable,
// DiscoverCandidates), whose 429 answers come back at once. client-go retries a 429 that
// carries Retry-After up to 10 times, waiting as told, and API Priority and Fairness asks a
// throttled client for up to a minute: a start-up check would then wait past its timeout and
// the exporter exit as "not reachable", or outlive the liveness probe of a process that serves
// nothing yet, and crash-loop for as long as the throttling lasts. A 429 already proves the
// server is there. Lists and watches keep client-go's retries: there, waiting as told is what
// a throttled client should do.
func startupConfig(cfg *rest.Config) *rest.Config {
	s := rest.CopyConfig(cfg)
	s.Wrap(func(rt http.RoundTripper) http.RoundTripper { return noRetryAfter{rt} })
	return s
}

// noRetryAfter drops Retry-After from 429 answers, so client-go returns them without retrying.
type noRetryAfter struct{ next http.RoundTripper }

func (t noRetryAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		resp.Header.Del("Retry-After")
	}
	return resp, err
}
