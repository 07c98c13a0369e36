package main

import (
	"strings"
	"testing"
	"time"
)

func note(at time.Time, status, set, alert, ns string) Notification {
	return Notification{At: at, Status: status, Alertname: alert, Set: set,
		Labels: map[string]string{"alertname": alert, "set": set, "namespace": ns}}
}

// A page belongs to the fault whose namespace it names, or to the exclusive fault running
// when it came; a resent firing alert pages once; on a must-not-page row a leadership alert
// is a false page and an alert about something else is shown apart; a page before a
// must-page row's fault, or later than the grace after its repair, is a false one; and the
// resolution is timed from the repair.
func TestScoreAttributesPagesAndTellsFalseFromOther(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	repair := at(300)
	kill := &Fault{ID: "kill", Namespace: "detect-kill", MustPage: true, Ran: true, FaultAt: at(60), RepairAt: &repair}
	skew := &Fault{ID: "skew", Namespace: "detect-skew", Ran: true, FaultAt: at(60)}
	outage := &Fault{ID: "outage", Namespace: "detect-outage", Exclusive: true, Ran: true, FaultAt: at(1010)}
	spans := []span{{at(0), at(500)}, {at(0), at(500)}, {at(1000), at(1200)}}
	all := []Notification{
		note(at(10), "firing", "kube-state-metrics", "LeaseNotRenewed", "detect-kill"), // before the fault
		note(at(11), "resolved", "kube-state-metrics", "LeaseNotRenewed", "detect-kill"),
		note(at(200), "firing", "lease-exporter", "LeaseNoLeader", "detect-kill"),
		note(at(201), "firing", "lease-exporter", "LeaseNoLeader", "detect-kill"), // resent
		note(at(320), "resolved", "lease-exporter", "LeaseNoLeader", "detect-kill"),
		note(at(320), "firing", "self-report", "FrequentLeaderTransitions", "detect-kill"), // within the grace
		note(at(340), "firing", "self-report", "NoLeaderElected", "detect-kill"),           // after it
		note(at(345), "resolved", "self-report", "NoLeaderElected", "detect-kill"),
		note(at(100), "firing", "lease-exporter", "LeaseHolderClockSkew", "detect-skew"),
		note(at(110), "firing", "kube-state-metrics", "LeaseNotRenewed", "detect-skew"),
		note(at(1050), "firing", "self-report", "NoLeaderElected", "detect-kill"), // during the outage
		note(at(900), "firing", "lease-exporter", "LeaseNoLeader", "kube-system"), // nobody's
	}
	unattributed := score([]*Fault{kill, skew, outage}, spans, all, 31*time.Second)

	k := kill.Results["lease-exporter"]
	if !k.Paged || *k.PageSeconds != 140 || len(k.Alerts) != 1 || k.ResolveSeconds == nil || *k.ResolveSeconds != 20 {
		t.Errorf("kill, ours: %+v; want paged after 140 s with LeaseNoLeader, resolved 20 s after the repair", k)
	}
	if s := kill.Results["self-report"]; !s.Paged || *s.PageSeconds != 260 || len(s.Alerts) != 1 || s.Alerts[0] != "FrequentLeaderTransitions" || len(s.False) != 1 || s.False[0].Alertname != "NoLeaderElected" {
		t.Errorf("kill, self-report: %+v; want the page 20 s after the repair caught, the one 40 s after it false", s)
	}
	if f := kill.Results["kube-state-metrics"]; f.Paged || len(f.False) != 1 {
		t.Errorf("kill, kube-state-metrics: %+v; want its page before the fault false, and no page", f)
	}
	if o := skew.Results["lease-exporter"]; len(o.False) != 0 || len(o.Other) != 1 {
		t.Errorf("skew, ours: %+v; want the clock-skew page shown apart, not false", o)
	}
	if o := skew.Results["kube-state-metrics"]; len(o.False) != 1 {
		t.Errorf("skew, kube-state-metrics: %+v; want its leadership alert a false page", o)
	}
	if o := outage.Results["self-report"]; len(o.False) != 1 {
		t.Errorf("outage, self-report: %+v; want the page in another namespace during it a false page of the outage", o)
	}
	if len(unattributed) != 1 || unattributed[0].Labels["namespace"] != "kube-system" {
		t.Errorf("unattributed = %v; want the kube-system page", unattributed)
	}
}

// On a row that must not page, an alert about the monitoring itself after the repair (the
// exporter's watch stayed down past the API server's return) is shown apart, not false, and
// -rescore sorts a run's recorded pages so again.
func TestQuietRowsShowOtherAlertsAfterTheRepairApart(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	repair := at(60)
	outage := &Fault{ID: "outage", Namespace: "detect-outage", Exclusive: true, Ran: true, FaultAt: at(0), RepairAt: &repair}
	all := []Notification{
		note(at(180), "firing", "lease-exporter", "LeaseExporterWatchStale", ""),
		note(at(190), "firing", "lease-exporter", "LeaseNoLeader", "detect-other"),
	}
	score([]*Fault{outage}, []span{{at(-10), at(400)}}, all, 31*time.Second)
	if o := outage.Results["lease-exporter"]; len(o.Other) != 1 || len(o.False) != 1 || o.False[0].Alertname != "LeaseNoLeader" {
		t.Errorf("outage, ours: %+v; want the watch alert shown apart and LeaseNoLeader false", o)
	}

	// A run scored before the fix: both in False.
	r := &Results{Faults: []Fault{{ID: "outage", Ran: true, FaultAt: at(0), RepairAt: &repair, Results: map[string]Outcome{
		"lease-exporter": {False: []Notification{all[1], all[0]}, Other: []Notification{}},
	}}}}
	rescore(r, "abc1234")
	o := r.Faults[0].Results["lease-exporter"]
	if len(o.Other) != 1 || o.Other[0].Alertname != "LeaseExporterWatchStale" || len(o.False) != 1 || o.False[0].Alertname != "LeaseNoLeader" || r.Rescored != "abc1234" {
		t.Errorf("rescored: %+v (rescored %q); want the watch alert other, LeaseNoLeader false, rescored abc1234", o, r.Rescored)
	}
	if table := renderTable(r); !strings.Contains(table, "sorted into false and other again by the scoring at abc1234") {
		t.Errorf("the table does not say it was rescored:\n%s", table)
	}
}
