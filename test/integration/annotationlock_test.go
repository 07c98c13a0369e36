package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

// Issue 15: ConfigMap and Endpoints annotation locks, written by real electors (the Python
// client's ConfigMapLock, client-go's old annotation locks) and by hand (malformed records),
// read by one exporter watching every lock kind.

// TestAnnotationLocks runs every annotation-lock case against one exporter watching all
// lock kinds, as a deployment with --locks=leases,configmaps,endpoints does.
func TestAnnotationLocks(t *testing.T) {
	exp := env.StartReady(t, env.Bin, "--locks=leases,configmaps,endpoints", "--metrics.extended")
	t.Run("PythonConfigMapLockFailover", func(t *testing.T) { t.Parallel(); pythonConfigMapFailover(t, exp) })
	t.Run("ClientGoEndpointsLock", func(t *testing.T) { t.Parallel(); clientGoEndpointsLock(t, exp) })
	t.Run("LeaseAndConfigMapShareAName", func(t *testing.T) { t.Parallel(); leaseAndConfigMapShareName(t, exp) })
	// Not parallel with the others: it asserts on the exporter-wide parse error counters.
	t.Run("MalformedRecords", func(t *testing.T) { malformedRecords(t, exp) })
}

// Two copies of the Python client's ConfigMapLock elector: the exporter shows the holder,
// held, the duration parsed from "15" and a fresh observed renewal; kill -9 the leader and the
// successor appears with one more observed change, without a leaderless stretch long enough
// for LeaseNoLeader (2 minutes).
func pythonConfigMapFailover(t *testing.T, exp *exporterproc.Exporter) {
	if err := election.CheckPython(false); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, "py-cm")
	electors := map[string]*election.PythonElector{}
	for _, id := range []string{"py-a", "py-b"} {
		e, err := election.StartPython(election.PythonOptions{Kubeconfig: env.CP.KubeconfigPath(), Dir: t.TempDir(),
			Namespace: ns, Name: "py-lock", Identity: id, Lock: election.PythonConfigMap})
		if err != nil {
			t.Fatal(err)
		}
		electors[id] = e
		t.Cleanup(func() {
			e.Kill()
			if t.Failed() {
				t.Logf("===== python elector %s log =====\n%s", id, testsuite.Tail(e.Log(), 30))
			}
		})
	}
	p := &lockProbe{exp: exp, kind: "ConfigMap", ns: ns, name: "py-lock"}
	leading := func() (string, error) {
		var ids []string
		for id, e := range electors {
			if e.Leading() {
				ids = append(ids, id)
			}
		}
		if len(ids) != 1 {
			return "", fmt.Errorf("electors leading: %v", ids)
		}
		return ids[0], nil
	}
	var leader string
	before := p.until(t, "one Python elector leads and the exporter shows it", func(m lockMetrics) error {
		var err error
		if leader, err = leading(); err != nil {
			return err
		}
		age := float64(time.Now().UnixMicro())/1e6 - m.v("lease_observed_renew_timestamp_seconds")
		switch {
		case m.infos != 1:
			return fmt.Errorf("%d lease_info series", m.infos)
		case m.holder != leader:
			return fmt.Errorf("holder %q, leading elector %s", m.holder, leader)
		case m.v("lease_held") != 1:
			return fmt.Errorf("lease_held %v", m.v("lease_held"))
		case m.v("lease_duration_seconds") != 15:
			return brokenf(`lease_duration_seconds %v, want 15 (the Python client writes "15")`, m.v("lease_duration_seconds"))
		case !(age >= -1 && age < 5):
			return fmt.Errorf("observed renewal %.1f s old, want a few seconds at most (renewals every 2 s)", age)
		case !math.IsNaN(m.v("lease_transitions_total")):
			return brokenf("lease_transitions_total %v: the Python client writes no leaderTransitions", m.v("lease_transitions_total"))
		}
		return nil
	})
	electors[leader].Kill()
	killed := time.Now()
	var successor string
	for id := range electors {
		if id != leader {
			successor = id
		}
	}
	p.until(t, "the successor appears", func(m lockMetrics) error {
		if time.Since(killed) > 90*time.Second {
			return brokenf("no successor %v after the kill: LeaseNoLeader (2 min) would be close to firing", time.Since(killed))
		}
		switch {
		case m.holder == leader:
			return errors.New("the killed leader still holds the lock")
		case m.holder != successor:
			return brokenf("holder %q, want %s", m.holder, successor)
		case m.v("lease_held") != 1:
			return fmt.Errorf("successor not held yet: lease_held %v", m.v("lease_held"))
		}
		if got, want := m.v("lease_observed_holder_changes_total"), before.v("lease_observed_holder_changes_total")+1; got != want {
			return brokenf("lease_observed_holder_changes_total %v, want %v (one takeover)", got, want)
		}
		return nil
	})
	t.Logf("%s killed; %s shown as holder %v later", leader, successor, time.Since(killed).Round(100*time.Millisecond))
	if n := partlyReadableLogs(exp, ns, "py-lock"); n != 0 {
		t.Fatalf("the Python client's record was logged as unreadable %d times:\n%s", n, exp.Logs())
	}
}

// client-go's old EndpointsLock writes leaderTransitions: a takeover shows in
// lease_transitions_total (from leaderTransitions) and in the observed changes.
func clientGoEndpointsLock(t *testing.T, exp *exporterproc.Exporter) {
	ns := newNamespace(t, "ep-lock")
	var candidates []*election.Candidate
	for i := range 2 {
		c, err := election.StartConfig(context.Background(), env.Client, election.Config{Namespace: ns, Name: "ep",
			Identity: fmt.Sprintf("ep-%d", i), Timings: election.Fast, Kind: election.LockEndpoints})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
		candidates = append(candidates, c)
	}
	p := &lockProbe{exp: exp, kind: "Endpoints", ns: ns, name: "ep"}
	var leader *election.Candidate
	before := p.until(t, "a client-go candidate leads the Endpoints lock", func(m lockMetrics) error {
		leader = nil
		for _, c := range candidates {
			if c.Leading() {
				leader = c
			}
		}
		switch {
		case leader == nil:
			return errors.New("no candidate leads")
		case m.holder != leader.Identity || m.v("lease_held") != 1:
			return fmt.Errorf("holder %q held %v, leading %s", m.holder, m.v("lease_held"), leader.Identity)
		case m.v("lease_duration_seconds") != election.Fast.LeaseDuration.Seconds():
			return brokenf("lease_duration_seconds %v", m.v("lease_duration_seconds"))
		case math.IsNaN(m.v("lease_transitions_total")):
			return brokenf("no lease_transitions_total: client-go writes leaderTransitions")
		}
		return nil
	})
	leader.Stop() // no release: stops renewing, as a crash
	p.until(t, "the other candidate takes the Endpoints lock over", func(m lockMetrics) error {
		switch {
		case m.holder == leader.Identity || m.holder == "":
			return fmt.Errorf("holder %q", m.holder)
		case m.v("lease_transitions_total") != before.v("lease_transitions_total")+1:
			return brokenf("lease_transitions_total %v, want %v (leaderTransitions +1)", m.v("lease_transitions_total"), before.v("lease_transitions_total")+1)
		case m.v("lease_observed_holder_changes_total") != before.v("lease_observed_holder_changes_total")+1:
			return brokenf("lease_observed_holder_changes_total %v, want +1", m.v("lease_observed_holder_changes_total"))
		}
		return nil
	})
}

// client-go's configmapsleases migration lock: a Lease and a ConfigMap lock of the same
// namespace and name, both exported, told apart by kind.
func leaseAndConfigMapShareName(t *testing.T, exp *exporterproc.Exporter) {
	ns := newNamespace(t, "same-name")
	for _, kind := range []election.LockKind{election.LockLease, election.LockConfigMap} {
		c, err := election.StartConfig(context.Background(), env.Client, election.Config{Namespace: ns, Name: "shared",
			Identity: "holder-of-" + string(kind), Timings: election.Fast, Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
	}
	for _, kind := range []string{"Lease", "ConfigMap"} {
		p := &lockProbe{exp: exp, kind: kind, ns: ns, name: "shared"}
		p.until(t, "both locks exported", func(m lockMetrics) error {
			if m.infos != 1 || m.holder != "holder-of-"+kind || m.v("lease_held") != 1 {
				return fmt.Errorf("%d lease_info, holder %q, held %v", m.infos, m.holder, m.v("lease_held"))
			}
			if all := m.scrape.Series("lease_info", map[string]string{"namespace": ns, "lease": "shared"}); len(all) != 2 {
				return fmt.Errorf("%d lease_info series for %s/shared, want 2 (one per kind)", len(all), ns)
			}
			return nil
		})
	}
}

// A table of malformed records: each lock is exported with what could be read, each
// unreadable field is counted by reason, each object is logged once, and a good lock beside
// them is unaffected.
func malformedRecords(t *testing.T, exp *exporterproc.Exporter) {
	ns := newNamespace(t, "malformed")
	now := time.Now().UTC().Format(time.RFC3339Nano)
	cases := []struct {
		name, kind, record string
		holder             string
		duration           float64 // NaN: no lease_duration_seconds
		errors             []string
	}{
		{"good", "ConfigMap", `{"holderIdentity":"ok","leaseDurationSeconds":15,"renewTime":"` + now + `"}`, "ok", 15, nil},
		{"truncated", "ConfigMap", `{"holderIdentity":"a","leaseDurationSeconds":15,"renewTime":"` + now, "a", 15, []string{"ConfigMap/malformed_json"}},
		{"not-json", "ConfigMap", `garbage`, "", math.NaN(), []string{"ConfigMap/malformed_json"}},
		{"duration-words", "ConfigMap", `{"holderIdentity":"b","leaseDurationSeconds":"fifteen","renewTime":"` + now + `"}`, "b", math.NaN(), []string{"ConfigMap/bad_duration"}},
		{"times-bad", "ConfigMap", `{"holderIdentity":"c","leaseDurationSeconds":15,"acquireTime":12,"renewTime":"tomorrow"}`, "c", 15,
			[]string{"ConfigMap/bad_time", "ConfigMap/bad_time"}},
		{"holder-number", "ConfigMap", `{"holderIdentity":42,"leaseDurationSeconds":"15"}`, "", 15, []string{"ConfigMap/bad_holder"}},
		{"transitions-negative", "Endpoints", `{"holderIdentity":"d","leaseDurationSeconds":15,"leaderTransitions":-3}`, "d", 15, []string{"Endpoints/bad_transitions"}},
	}
	base := parseErrors(t, exp)
	want := map[string]float64{}
	for _, tc := range cases {
		meta := metav1.ObjectMeta{Namespace: ns, Name: tc.name, Annotations: map[string]string{leaderrecord.Annotation: tc.record}}
		var err error
		if tc.kind == "ConfigMap" {
			_, err = env.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: meta,
				Data: map[string]string{"payload": strings.Repeat("x", 1000)}}, metav1.CreateOptions{})
		} else {
			_, err = env.Client.CoreV1().Endpoints(ns).Create(context.Background(), &corev1.Endpoints{ObjectMeta: meta}, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tc.errors {
			want[e]++
		}
	}
	for _, tc := range cases {
		p := &lockProbe{exp: exp, kind: tc.kind, ns: ns, name: tc.name}
		p.until(t, "exported with what could be read", func(m lockMetrics) error {
			switch {
			case m.infos != 1:
				return fmt.Errorf("%d lease_info series", m.infos)
			case m.holder != tc.holder:
				return brokenf("holder %q, want %q", m.holder, tc.holder)
			case m.v("lease_duration_seconds") != tc.duration && !(math.IsNaN(tc.duration) && math.IsNaN(m.v("lease_duration_seconds"))):
				return brokenf("lease_duration_seconds %v, want %v", m.v("lease_duration_seconds"), tc.duration)
			case tc.name == "good" && m.v("lease_held") != 1:
				return brokenf("the good lock beside the broken ones is not held")
			}
			return nil
		})
	}
	got := parseErrors(t, exp)
	for key, n := range want {
		if got[key]-base[key] != n {
			t.Errorf("lease_exporter_lock_parse_errors_total %s rose by %v, want %v", key, got[key]-base[key], n)
		}
	}
	for _, tc := range cases {
		if n, wantLogs := partlyReadableLogs(exp, ns, tc.name), min(len(tc.errors), 1); n != wantLogs {
			t.Errorf("%s logged %d times, want %d", tc.name, n, wantLogs)
		}
	}

	// Renewals of a broken record count again but are not logged again.
	for i := range 3 {
		cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "duration-words", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Annotations[leaderrecord.Annotation] = fmt.Sprintf(`{"holderIdentity":"b","leaseDurationSeconds":"fifteen","renewTime":"%s"}`,
			time.Now().Add(time.Duration(i)*time.Millisecond).UTC().Format(time.RFC3339Nano))
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	key := "ConfigMap/bad_duration"
	for end := time.Now().Add(deadline); parseErrors(t, exp)[key]-base[key] != 4; time.Sleep(poll) {
		if time.Now().After(end) {
			t.Fatalf("%s rose by %v after three renewals of the broken lock, want 4", key, parseErrors(t, exp)[key]-base[key])
		}
	}
	if n := partlyReadableLogs(exp, ns, "duration-words"); n != 1 {
		t.Fatalf("broken lock logged %d times after three renewals, want once", n)
	}
	for key := range parseErrors(t, exp) {
		if strings.HasPrefix(key, "Lease/") {
			t.Fatalf("parse error series %s: Leases have no annotation record", key)
		}
	}
}

// TestAnnotationLockFilters: namespace exclusion, the label selector and sharding apply to
// ConfigMap locks exactly as to Leases.
func TestAnnotationLockFilters(t *testing.T) {
	kept, excluded, sharded := newNamespace(t, "cm-kept"), newNamespace(t, "cm-excluded"), newNamespace(t, "cm-sharded")
	create := func(ns, name string, labels map[string]string) {
		t.Helper()
		now := time.Now().UTC().Format(time.RFC3339Nano)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: map[string]string{
			leaderrecord.Annotation: `{"holderIdentity":"h","leaseDurationSeconds":15,"renewTime":"` + now + `"}`}}}
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	selected := map[string]string{"app": "x"}
	create(kept, "selected", selected)
	create(kept, "unselected", nil)
	create(excluded, "selected", selected)
	const n = 12
	for i := range n {
		create(sharded, fmt.Sprintf("lock-%d", i), nil)
	}
	exported := func(exp *exporterproc.Exporter, ns string) []string {
		t.Helper()
		s, err := exp.Scrape()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range s.Series("lease_info", map[string]string{"namespace": ns, "kind": "ConfigMap"}) {
			names = append(names, x.Labels["lease"])
		}
		slices.Sort(names)
		return names
	}

	filtered := env.StartReady(t, env.Bin, "--locks=configmaps", "--namespaces-exclude="+excluded, "--lease-selector=app=x")
	if got := exported(filtered, kept); !slices.Equal(got, []string{"selected"}) {
		t.Errorf("namespace %s: exported %v, want only the selected lock", kept, got)
	}
	if got := exported(filtered, excluded); len(got) != 0 {
		t.Errorf("excluded namespace %s: exported %v", excluded, got)
	}

	var union []string
	for shard := range 2 {
		exp := env.StartReady(t, env.Bin, "--locks=configmaps", "--namespaces="+sharded, "--total-shards=2", fmt.Sprintf("--shard=%d", shard))
		for _, name := range exported(exp, sharded) {
			if sharding.Of(sharded, name, 2) != shard {
				t.Errorf("shard %d exported %s of shard %d", shard, name, sharding.Of(sharded, name, 2))
			}
			union = append(union, name)
		}
	}
	if len(union) != n {
		t.Errorf("the two shards exported %d ConfigMap locks together, want each of the %d once: %v", len(union), n, union)
	}
}
