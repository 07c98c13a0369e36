package informer

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Every 429 answer is reported as it arrives, with the resource and the Retry-After asked
// for, although client-go retries them inside one List call; health then counts each once.
func TestEvery429IsReportedAsItArrives(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`))
	}))
	defer srv.Close()
	h := newHealth(slog.New(slog.DiscardHandler), newMetrics(prometheus.NewRegistry()), func() time.Time { return t0 })
	var mu sync.Mutex
	var reports []string
	cfg := observeThrottling(&rest.Config{Host: srv.URL}, func(resource string, err error) {
		mu.Lock()
		reports = append(reports, resource+" "+err.Error())
		mu.Unlock()
		h.throttled(resource, err)
	})
	_, err := kubernetes.NewForConfigOrDie(cfg).CoordinationV1().Leases("team-a").List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("list: %v, want the 429", err)
	}
	h.failed("leases.coordination.k8s.io", err) // the reflector's report of the same call
	if len(reports) != 11 {
		t.Fatalf("%d reports, want 11 (client-go's first try and 10 retries): %q", len(reports), reports)
	}
	if want := "leases.coordination.k8s.io GET /apis/coordination.k8s.io/v1/namespaces/team-a/leases: 429 Too Many Requests (Retry-After 0)"; !strings.HasPrefix(reports[0], want) {
		t.Errorf("report %q, want it to start %q", reports[0], want)
	}
	if got := testutil.ToFloat64(h.metrics.watchErrors.WithLabelValues("throttled")); got != 11 {
		t.Errorf("watch_errors_total{reason=throttled} = %v, want 11: each answer once", got)
	}
}

func TestResourceOfAPIPaths(t *testing.T) {
	for path, want := range map[string]string{
		"/apis/coordination.k8s.io/v1/namespaces/x/leases":   "leases.coordination.k8s.io",
		"/apis/coordination.k8s.io/v1/leases":                "leases.coordination.k8s.io",
		"/api/v1/configmaps":                                 "configmaps",
		"/api/v1/namespaces/kube-system/endpoints/scheduler": "endpoints",
		"/version": "/version",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}
