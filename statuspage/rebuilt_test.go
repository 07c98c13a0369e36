package statuspage

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// rebuiltTenures is a Rebuilt serving fixed tenures for every lock.
type rebuiltTenures []lock.Tenure

func (r rebuiltTenures) Tenures(string) []lock.Tenure { return r }

func micros(d time.Duration) int64 { return t0.Add(d).UnixMicro() }

// Rebuilt tenures go before the observed history, marked rebuilt, in the JSON and on the
// page; one that would end after the first observed tenure began is left out (the Lease and
// the watch are never contradicted), and one the Events never showed end is ended, unknown
// how, where the observed history takes over, unless it is the observed holder's own.
func TestRebuiltHistoryGoesBeforeTheObservedAndNeverContradictsIt(t *testing.T) {
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(2 * time.Minute)
	// The exporter started at 60 s and found c holding, acquired at 50 s.
	l := o.Observe(lease("orders", "worker", "u-1", 9, "c", t0.Add(58*time.Second), t0.Add(50*time.Second)), t0.Add(60*time.Second), false)
	for _, tc := range []struct {
		name    string
		rebuilt rebuiltTenures
		want    []string // holder/ended/rebuilt
	}{
		{"ended before", rebuiltTenures{
			{Holder: "a", From: micros(0), To: micros(20 * time.Second), LastRenew: micros(20 * time.Second), Ended: lock.Expired, Live: true, Rebuilt: true},
			{Holder: "b", From: micros(22 * time.Second), To: micros(49 * time.Second), LastRenew: micros(49 * time.Second), Ended: lock.Released, Live: true, Rebuilt: true},
		}, []string{"a/expired/true", "b/released/true", "c//false"}},
		{"ends after the observed start", rebuiltTenures{
			{Holder: "b", From: micros(22 * time.Second), To: micros(55 * time.Second), LastRenew: micros(55 * time.Second), Ended: lock.Released, Live: true, Rebuilt: true},
		}, []string{"c//false"}},
		{"open, another holder's", rebuiltTenures{
			{Holder: "b", From: micros(22 * time.Second), LastRenew: micros(22 * time.Second), Live: true, Rebuilt: true},
		}, []string{"b/unknown/true", "c//false"}},
		{"open, the current holder's", rebuiltTenures{
			{Holder: "c", From: micros(50 * time.Second), LastRenew: micros(50 * time.Second), Live: true, Rebuilt: true},
		}, []string{"c//false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(view{leases: []*lock.Lease{l}, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now }).WithRebuilt(tc.rebuilt)
			d := getJSON[api.Detail](t, h, "/api/v1/leases/orders/worker")
			var got []string
			for _, tn := range d.History.Tenures {
				got = append(got, tn.Holder+"/"+tn.Ended+"/"+map[bool]string{true: "true", false: "false"}[tn.Rebuilt])
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("tenures %v, want %v", got, tc.want)
			}
			_, page := get(t, h, "/leases/orders/worker")
			if n, want := strings.Count(page, "(rebuilt from Events)"), strings.Count(strings.Join(tc.want, " "), "/true"); n != want {
				t.Errorf("the page marks %d tenures rebuilt, want %d", n, want)
			}
		})
	}
}

// A rebuilt tenure whose Events showed neither its start nor its length says so: no `from`
// and a null `held_seconds` in the JSON, "unknown" on the detail page, and a timeline bar
// that claims no start; the gap before the next tenure is still measured from its end.
func TestRebuiltTenureOfUnknownStartClaimsNoStart(t *testing.T) {
	o := fake.NewObserver(lock.DefaultHistory)
	now := t0.Add(2 * time.Minute)
	l := o.Observe(lease("orders", "worker", "u-1", 9, "c", t0.Add(58*time.Second), t0.Add(50*time.Second)), t0.Add(60*time.Second), false)
	rebuilt := rebuiltTenures{{Holder: "a", LastRenew: micros(40 * time.Second), To: micros(40 * time.Second), Ended: lock.Released, Rebuilt: true}}
	h := New(view{leases: []*lock.Lease{l}, synced: true}, slog.New(slog.DiscardHandler), func() time.Time { return now }).WithRebuilt(rebuilt)
	d := getJSON[api.Detail](t, h, "/api/v1/leases/orders/worker")
	if len(d.History.Tenures) != 2 {
		t.Fatalf("tenures %+v, want a's (rebuilt) and c's", d.History.Tenures)
	}
	a, c := d.History.Tenures[0], d.History.Tenures[1]
	if !a.From.IsZero() || a.HeldSeconds != nil || a.To == nil || !a.To.Equal(t0.Add(40*time.Second)) {
		t.Errorf("a's tenure %+v: want no start, no length, ended at 40 s", a)
	}
	if c.GapBeforeSeconds == nil || *c.GapBeforeSeconds != 10 {
		t.Errorf("c's gap before %v, want 10 s (from a's end at 40 s to c's acquire at 50 s)", c.GapBeforeSeconds)
	}
	_, body := get(t, h, "/api/v1/leases/orders/worker")
	if strings.Contains(body, `"from":"0001`) || !strings.Contains(strings.ReplaceAll(body, " ", ""), `"held_seconds":null`) {
		t.Errorf("JSON %s: want a's from absent and held_seconds null", body)
	}
	_, page := get(t, h, "/leases/orders/worker")
	if !strings.Contains(page, "since when is unknown") || strings.Contains(page, "0001-01-01") {
		t.Errorf("detail page: want a's bar to say its start is unknown and no year-1 date:\n%s", page)
	}
}
