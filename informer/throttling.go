package informer

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/rest"
)

// observeThrottling returns a copy of cfg whose every 429 answer is reported to throttled as
// it arrives. client-go retries a 429 that carries Retry-After up to 10 times inside one list
// or watch call, waiting as the API server asks (API Priority and Fairness asks for seconds
// to a minute), so a throttled call can take minutes before it fails: without this, the
// exporter would say nothing for that long, and /readyz would not say why it is not synced.
// Each answer is counted once, here; health.failed then leaves 429 errors alone.
func observeThrottling(cfg *rest.Config, throttled func(resource string, err error)) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return throttleObserver{next: rt, report: throttled} })
	return c
}

type throttleObserver struct {
	next   http.RoundTripper
	report func(resource string, err error)
}

func (t throttleObserver) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		wait := cmp.Or(resp.Header.Get("Retry-After"), "none")
		t.report(resourceOf(r.URL.Path), fmt.Errorf("%s %s: 429 Too Many Requests (Retry-After %s): the API server's flow control "+
			"(API Priority and Fairness) rejects the exporter's requests; client-go waits and retries", r.Method, r.URL.Path, wait))
	}
	return resp, err
}

// resourceOf names the resource of an API path as the scopes do, e.g. "leases.coordination.k8s.io"
// for /apis/coordination.k8s.io/v1/namespaces/x/leases, "configmaps" for /api/v1/configmaps;
// other paths are returned as they are.
func resourceOf(path string) string {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	group := ""
	switch {
	case len(seg) >= 3 && seg[0] == "apis":
		group, seg = seg[1], seg[3:]
	case len(seg) >= 2 && seg[0] == "api":
		seg = seg[2:]
	default:
		return path
	}
	if len(seg) >= 3 && seg[0] == "namespaces" {
		seg = seg[2:]
	}
	if len(seg) == 0 {
		return path
	}
	if group == "" {
		return seg[0]
	}
	return seg[0] + "." + group
}
