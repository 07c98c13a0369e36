package statuspage

import (
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// listedLocks are leader-election locks as the exporter finds them at start-up, in its
// initial list, and, for two of them, in a relist after a broken watch: nothing about them
// was seen happen, so their history is what their record says. Judged at 20 s.
func listedLocks() ([]*lock.Lease, time.Time) {
	o := fake.NewObserver(lock.DefaultHistory)
	list := func(l *coordinationv1.Lease, at time.Duration) *lock.Lease {
		return o.Observe(l, t0.Add(at), false)
	}
	noAcquire := lease("sync", "no-acquire-time", "u-2", 1, "b", t0.Add(9*time.Second), t0)
	noAcquire.Spec.AcquireTime = nil
	noRenew := lease("sync", "no-renew-time", "u-3", 1, "c", t0, t0)
	noRenew.Spec.RenewTime = nil
	list(lease("sync", "relisted", "u-5", 1, "e", t0.Add(8*time.Second), t0.Add(-time.Hour)), 10*time.Second)
	list(lease("sync", "relisted-unchanged", "u-6", 1, "f", t0.Add(8*time.Second), t0), 10*time.Second)
	return []*lock.Lease{
		list(lease("sync", "held", "u-1", 1, "a", t0.Add(9*time.Second), t0.Add(-time.Hour)), 10*time.Second),
		list(noAcquire, 10*time.Second),
		list(noRenew, 10*time.Second),
		list(lease("sync", "released", "u-4", 1, "", t0.Add(9*time.Second), t0), 10*time.Second),
		list(lease("sync", "relisted", "u-5", 2, "e", t0.Add(16*time.Second), t0.Add(-time.Hour)), 17*time.Second),
		list(lease("sync", "relisted-unchanged", "u-6", 1, "f", t0.Add(8*time.Second), t0), 17*time.Second),
		list(lease("sync", "expired", "u-7", 1, "g", t0.Add(-time.Minute), t0.Add(-2*time.Minute)), 10*time.Second),
		list(lease("sync", "acquired-after-renew", "u-8", 1, "h", t0.Add(5*time.Second), t0.Add(7*time.Second)), 10*time.Second),
	}, t0.Add(20 * time.Second)
}

// A lock found in a list and not seen to change since shows the same tenure, renew times,
// last holder change and leaderless time on every page and in the JSON as before the
// history was kept lazily: testdata/listed-locks.golden was written by the code that
// allocated a history for every lock at first sight.
func TestListedLocksShowTheirRecordsHistory(t *testing.T) {
	leases, now := listedLocks()
	h := New(view{leases: leases, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now })
	paths := []string{"/api/v1/leases", "/leases"}
	for _, l := range leases {
		paths = append(paths, "/api/v1/leases/sync/"+l.Name(), "/leases/sync/"+l.Name())
	}
	var got strings.Builder
	for _, path := range paths {
		_, body := get(t, h, path)
		if i := strings.Index(body, "<body>"); i >= 0 {
			body = body[i:] // the pages' style and script are not the lock's
		}
		got.WriteString("GET " + path + "\n" + body + "\n\n")
	}
	golden := filepath.Join("testdata", "listed-locks.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("pages of locks seen only in lists differ from %s; got:\n%s", golden, got.String())
	}
}

// The detail page sums up the leaderless times between the tenures kept: the election fixture
// was leaderless 2 s before b (a's lease expired at 25 s, b took it at 27 s) and 1 s before c
// (b released at 40 s, c took it at 41 s).
func TestDetailPageSumsUpTheGaps(t *testing.T) {
	h, _ := fixture(t, "h")
	_, page := get(t, h, "/leases/orders/worker")
	if want := `<span id="gaps">median 2.0s, worst 2.0s over the last 2 holder changes</span>`; !strings.Contains(page, want) {
		t.Errorf("the detail page lacks %s", want)
	}
}
