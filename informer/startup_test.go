package informer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A throttled start-up check gets its 429 back from the first request, where client-go
// would repeat a 429 carrying Retry-After, waiting as told, up to 10 more times.
func TestStartupChecksDoNotWaitOutRetryAfter(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Retry-After", "0")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`))
	}))
	defer srv.Close()
	version := func(cfg *rest.Config) error {
		return kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient().Get().AbsPath("/version").Do(context.Background()).Error()
	}
	cfg := &rest.Config{Host: srv.URL}
	if err := version(startupConfig(cfg)); !apierrors.IsTooManyRequests(err) || requests.Load() != 1 {
		t.Fatalf("start-up client: %v after %d requests, want a 429 after 1", err, requests.Load())
	}
	requests.Store(0)
	if err := version(cfg); !apierrors.IsTooManyRequests(err) || requests.Load() < 2 {
		t.Fatalf("plain client: %v after %d requests; the test expects client-go to retry (else it shows nothing)", err, requests.Load())
	}
	t.Logf("client-go alone made %d requests", requests.Load())
}
