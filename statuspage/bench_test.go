package statuspage

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
)

// BenchmarkPages renders each page and its JSON over 100k Leases, the mix of a large cluster
// (90% node heartbeats in kube-node-lease, 10% leader elections in 100 namespaces), each
// election with the fixture's three tenures. The target is 50 ms a page (docs/benchmarks.md).
func BenchmarkPages(b *testing.B) {
	const n = 100_000
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(51 * time.Second)
	leases := make([]*lock.Lease, 0, n)
	for i := range n / 10 {
		leases = append(leases, election(o, fmt.Sprintf("team-%02d", i%100), fmt.Sprintf("ctrl-%05d", i)))
	}
	for i := range n - n/10 {
		node := fmt.Sprintf("node-%05d", i)
		leases = append(leases, o.Observe(lease("kube-node-lease", node, "u-"+node, 1, node, now.Add(-time.Second), t0), now.Add(-time.Second), true))
	}
	h := New(indexed(view{leases: leases, synced: true}), slog.New(slog.DiscardHandler), func() time.Time { return now })
	for _, path := range []string{
		"/leases", "/leases?class=leader-election", "/leases?class=node-heartbeat", "/leases/team-42/ctrl-04242", "/leases/team-42/ctrl-04242?window=15m",
		"/api/v1/leases", "/api/v1/leases/team-42/ctrl-04242",
	} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", path, rec.Code)
				}
			}
		})
	}
}

// indexedView looks its locks up in a map, as informer.Cache does in its stores, so a
// detail's cost is the page's own, not a test fake's pass over every lock.
type indexedView struct {
	view
	index map[lock.Ref]*lock.Lease
}

func indexed(v view) indexedView {
	iv := indexedView{view: v, index: make(map[lock.Ref]*lock.Lease, len(v.leases))}
	for _, l := range v.leases {
		iv.index[l.Ref()] = l
	}
	return iv
}

func (v indexedView) Lookup(kind lock.Kind, namespace, name string) *lock.Lease {
	return v.index[lock.Ref{Kind: kind, Namespace: namespace, Name: name}]
}
