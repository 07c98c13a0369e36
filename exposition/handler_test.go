package exposition

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
)

func handlerFor(view informer.Ordered) *Handler { return handlerAt(view, nil) }

// handlerAt is handlerFor judging by clock now (nil: the real one).
func handlerAt(view informer.Ordered, now func() time.Time) *Handler {
	s := collector.Settings{Now: now}
	self := prometheus.NewRegistry()
	self.MustRegister(collector.NewStatus(view, s))
	return NewHandler(self, collector.NewTextWriter(view, s), collector.New(view, s), slog.New(slog.DiscardHandler))
}

func TestMetricsFormats(t *testing.T) {
	view := fake.NewOneLeaseView()
	close(view.Block)
	srv := httptest.NewServer(handlerFor(view))
	defer srv.Close()
	for _, tc := range []struct {
		name, accept, encoding, wantType string
	}{
		{"text", "text/plain;version=0.0.4", "", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"},
		{"text gzip", "", "gzip", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"},
		{"protobuf preferred, text accepted: fast text", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "", "text/plain; version=0.0.4"},
		{"protobuf only via client_golang", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "", "application/vnd.google.protobuf"},
		{"prometheus 2.42, openmetrics preferred: fast text", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "gzip", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"},
		{"openmetrics only: text via client_golang", "application/openmetrics-text;version=1.0.0", "", "text/plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept", tc.accept)
			req.Header.Set("Accept-Encoding", tc.encoding) // non-empty disables Go's transparent gzip
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body := io.Reader(resp.Body)
			if tc.encoding == "gzip" {
				if resp.Header.Get("Content-Encoding") != "gzip" {
					t.Fatal("gzip requested but not served")
				}
				if body, err = gzip.NewReader(resp.Body); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := io.ReadAll(body)
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
				t.Errorf("Content-Type %q, want prefix %q", ct, tc.wantType)
			}
			if !strings.Contains(string(b), "lease_held") || !strings.Contains(string(b), "lease_exporter_cache_synced") {
				t.Errorf("response lacks lease or self series:\n%.500s", b)
			}
		})
	}
}

// stalledView is an ordered view of n held Leases whose first walk in lease_info's order (the
// writer's; every walk before it, the status collector's and the other families', goes
// through) hands out half the locks and then waits for release: a render held in the middle.
type stalledView struct {
	leases  []*lock.Lease
	release chan struct{}
	stalled *atomic.Bool
}

func newStalledView(n int) stalledView {
	v := stalledView{release: make(chan struct{}), stalled: new(atomic.Bool)}
	holder, d := "pod-1", int32(15)
	renew := metav1.NewMicroTime(time.Now())
	for i := range n {
		v.leases = append(v.leases, lock.Project(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("ctrl-%06d", i)},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &renew}}))
	}
	return v
}

func (v stalledView) HasSynced() bool                  { return true }
func (v stalledView) JudgedAt(now time.Time) time.Time { return now }
func (v stalledView) Range(fn func(*lock.Lease)) {
	for _, l := range v.leases {
		fn(l)
	}
}
func (v stalledView) Scan(fn func([]*lock.Lease))                       { fn(v.leases) }
func (v stalledView) Snapshot(func(*lock.Lease) bool) informer.Snapshot { return v }
func (v stalledView) Release()                                          {}

// InOrder makes it its own Snapshot: the first walk of lease_info stops halfway until release.
func (v stalledView) InOrder(o lock.Order, _ func(*lock.Lease) bool, fn func([]*lock.Lease) bool) {
	if o != lock.ByInfo || v.stalled.Swap(true) {
		fn(v.leases)
		return
	}
	half := len(v.leases) / 2
	if fn(v.leases[:half]) {
		<-v.release
		fn(v.leases[half:])
	}
}

// A scrape streams: with the render held halfway through lease_info, the client has
// already received, and can decompress, the lines of the locks rendered so far. Identity and
// gzip alike.
func TestScrapeStreamsBeforeTheRenderEnds(t *testing.T) {
	for _, encoding := range []string{"identity", "gzip"} {
		t.Run(encoding, func(t *testing.T) {
			view := newStalledView(4000) // the families before lease_info are about 800 KB, past the first write (60 KB)
			srv := httptest.NewServer(handlerFor(view))
			defer srv.Close()
			released := sync.OnceFunc(func() { close(view.release) })
			defer released() // before srv.Close, which waits for the held scrape
			// The line of a lock from the first half, read while the render is held; the request
			// itself runs in the goroutine, since without streaming not even the headers come.
			want := `lease_duration_seconds{class="leader-election",kind="Lease",lease="ctrl-000100",namespace="ns"} 15`
			got := make(chan error, 1)
			go func() { got <- readUntil(srv.URL, encoding, want) }()
			select {
			case err := <-got:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no line of the rendered locks reached the client while the render was held: the scrape does not stream")
			}
		})
	}
}

// readUntil scrapes url with Accept-Encoding encoding and reads the body until a line equals
// want.
func readUntil(url, encoding, want string) error {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Encoding", encoding)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if encoding == "gzip" {
		if resp.Header.Get("Content-Encoding") != "gzip" {
			return fmt.Errorf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
		}
		if body, err = gzip.NewReader(resp.Body); err != nil {
			return err
		}
	}
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if sc.Text() == want {
			return nil
		}
	}
	return fmt.Errorf("the body ended without %q (%v)", want, sc.Err())
}
