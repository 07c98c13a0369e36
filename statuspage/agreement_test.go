package statuspage

import (
	"fmt"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/lease-exporter/lease-exporter/collector"
	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// mixedLocks: every class and standing at now, one lock of each: elections held, lagging,
// expired and released; node heartbeats on time, lagging, expired and never renewed; an API
// server identity. lastSeen is when the newest of them was observed.
func mixedLocks(now time.Time) (leases []*lock.Lease, lastSeen time.Time) {
	o := fake.NewObserver(lock.DefaultHistory)
	add := func(ns, name, holder string, age time.Duration, duration int32, renewed bool, labels map[string]string) {
		l := lease(ns, name, "u-"+ns+"-"+name, 1, holder, now.Add(-age), now.Add(-time.Hour))
		l.Spec.LeaseDurationSeconds = &duration
		l.Labels = labels
		if !renewed {
			l.Spec.RenewTime = nil
		}
		leases = append(leases, o.Observe(l, now.Add(-age), true))
		if seen := now.Add(-age); seen.After(lastSeen) {
			lastSeen = seen
		}
	}
	add("orders", "held", "w-0", 2*time.Second, 15, true, nil)
	add("orders", "lagging", "w-1", 10*time.Second, 15, true, nil)
	add("orders", "expired", "w-2", time.Minute, 15, true, nil)
	add("orders", "released", "", 30*time.Second, 15, true, nil)
	add("kube-node-lease", "node-on-time", "node-on-time", 5*time.Second, 40, true, nil)
	add("kube-node-lease", "node-lagging", "node-lagging", 25*time.Second, 40, true, nil)
	add("kube-node-lease", "node-expired", "node-expired", 3*time.Minute, 40, true, nil)
	add("kube-node-lease", "node-new", "node-new", time.Minute, 40, false, nil)
	add("kube-system", "apiserver-abc", "apiserver-abc", time.Second, 3600, true, map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"})
	return leases, lastSeen
}

// TestPageJSONAndMetricsAgree judges the mixed fixture through the three outputs (the JSON
// list, the list page and /metrics with every family) and requires them to agree on every
// lock: held, renew age (never negative), and the node heartbeats' standings; both while the
// watch is open and while one scope's is down, when the exporter judges as of the break and
// some records are newer than that.
func TestPageJSONAndMetricsAgree(t *testing.T) {
	now := t0.Add(time.Hour)
	leases, lastSeen := mixedLocks(now)
	for _, c := range []struct {
		name string
		v    interface {
			Source
			informer.Ordered
		}
	}{
		{"watch open", view{leases: leases, synced: true}},
		{"one scope's watch down", frozenView{view{leases: leases, synced: true}, lastSeen.Add(-3 * time.Second)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := func() time.Time { return now }
			h := New(c.v, slog.New(slog.DiscardHandler), clock)
			list := getJSON[api.List](t, h, "/api/v1/leases?class=")
			metrics := gather(t, collector.New(c.v, collector.Settings{Now: clock, Extended: true, PerLeaseNodeHeartbeats: true}),
				collector.NewStatus(c.v, collector.Settings{Now: clock}))
			_, page := get(t, h, "/leases?class=node-heartbeat")
			_, elections := get(t, h, "/leases?class=leader-election")
			_, identities := get(t, h, "/leases?class=apiserver-identity")
			page += elections + identities
			if len(list.Leases) != len(leases) {
				t.Fatalf("the JSON lists %d locks, want %d", len(list.Leases), len(leases))
			}
			for _, l := range list.Leases {
				key := l.Namespace + "/" + l.Name
				held := metrics[series("lease_held", l.Namespace, l.Name)]
				if held != map[bool]float64{true: 1, false: 0}[l.Held] {
					t.Errorf("%s: JSON held %v, lease_held %v", key, l.Held, held)
				}
				age, hasAge := metrics[series("lease_renew_age_seconds", l.Namespace, l.Name)]
				switch {
				case l.RenewAgeSeconds == nil && hasAge, l.RenewAgeSeconds != nil && !hasAge:
					t.Errorf("%s: JSON renew age %v, lease_renew_age_seconds present %v", key, l.RenewAgeSeconds, hasAge)
				case l.RenewAgeSeconds != nil && (*l.RenewAgeSeconds != age || age < 0):
					t.Errorf("%s: JSON renew age %v, lease_renew_age_seconds %v; want equal and never negative", key, *l.RenewAgeSeconds, age)
				}
				row := regexp.MustCompile(`<tr class="(healthy|unhealthy)" data-namespace="` + regexp.QuoteMeta(l.Namespace) + `" data-name="` + regexp.QuoteMeta(l.Name) + `"`).FindStringSubmatch(page)
				if row == nil || (row[1] == "healthy") != l.Healthy {
					t.Errorf("%s: the page's row %v, JSON healthy %v", key, row, l.Healthy)
				}
			}
			n := list.NodeHeartbeats
			if n == nil {
				t.Fatal("the JSON has no node-heartbeat summary")
			}
			for _, st := range lock.Standings {
				m := metrics[fmt.Sprintf(`lease_class_locks{class="node-heartbeat",state=%q}`, st)]
				if float64(n.Standings[st.String()]) != m {
					t.Errorf("node heartbeats %s: JSON %d, lease_class_locks %v", st, n.Standings[st.String()], m)
				}
				want := fmt.Sprintf(`<span id="nodes-%s" class="[a-z]+">%d %s</span>`, st, n.Standings[st.String()], st)
				if !regexp.MustCompile(want).MatchString(page) {
					t.Errorf("node heartbeats %s: the page lacks %s", st, want)
				}
			}
			if m := metrics[`lease_class_renew_age_seconds_count{class="node-heartbeat"}`]; float64(n.Total-n.NeverRenewed) != m {
				t.Errorf("node heartbeats with a renew age: JSON %d, histogram count %v", n.Total-n.NeverRenewed, m)
			}
		})
	}
}

func series(name, ns, lease string) string {
	return name + `{namespace="` + ns + `",lease="` + lease + `"}`
}

// gather collects cs and returns every sample by name{namespace,lease} (per-lease families),
// name{class,state} (lease_class_locks) or name_count{class} (the histogram's count).
func gather(t *testing.T, cs ...prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		reg.MustRegister(c)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			switch {
			case mf.GetType() == dto.MetricType_HISTOGRAM:
				out[mf.GetName()+`_count{class="`+labels["class"]+`"}`] = float64(m.GetHistogram().GetSampleCount())
			case labels["state"] != "":
				out[mf.GetName()+`{class="`+labels["class"]+`",state="`+labels["state"]+`"}`] = m.GetGauge().GetValue()
			case labels["lease"] != "":
				v := m.GetGauge().GetValue()
				if m.GetCounter() != nil {
					v = m.GetCounter().GetValue()
				}
				out[series(mf.GetName(), labels["namespace"], labels["lease"])] = v
			}
		}
	}
	return out
}
