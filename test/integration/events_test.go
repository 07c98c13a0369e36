package integration_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
	"github.com/lease-exporter/lease-exporter/lock/sharding"
)

// Issue 38: the exporter writes Kubernetes Events for the leadership changes it sees, from
// one elected writer, and rebuilds its history from them after a restart.

// startEventsExporter runs an exporter writing Events for ns's locks, electing its writer
// with the Lease ns/lock (watched too: the exporter sees its own election).
func startEventsExporter(t *testing.T, ns, lock string, flags ...string) *exporterproc.Exporter {
	t.Helper()
	return env.StartReady(t, env.Bin, append([]string{"--events", "--events.lock=" + ns + "/" + lock, "--namespaces=" + ns}, flags...)...)
}

// writing reports whether exp is its shard's elected Events writer (lease_exporter_events_writer).
func writing(exp *exporterproc.Exporter) (bool, error) {
	s, err := exp.Scrape()
	if err != nil {
		return false, err
	}
	w := s.Series("lease_exporter_events_writer", nil)
	if len(w) != 1 {
		return false, fmt.Errorf("%d lease_exporter_events_writer series, want 1", len(w))
	}
	return w[0].Value == 1, nil
}

// waitOneWriter waits until exactly one of exps writes, and returns it.
func waitOneWriter(t *testing.T, exps ...*exporterproc.Exporter) *exporterproc.Exporter {
	t.Helper()
	var writer *exporterproc.Exporter
	testsuite.Eventually(t, deadline, poll, "exactly one replica is elected to write Events", func() (bool, string) {
		writer = nil
		n := 0
		for _, e := range exps {
			w, err := writing(e)
			if err != nil {
				return false, err.Error()
			}
			if w {
				writer, n = e, n+1
			}
		}
		return n == 1, fmt.Sprintf("%d of %d replicas write", n, len(exps))
	})
	return writer
}

// eventsFor lists the exporter's Events regarding the lock ns/name, oldest first.
func eventsFor(t *testing.T, ns, name string) []eventsv1.Event {
	t.Helper()
	l, err := env.Client.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, ev := range l.Items {
		if ev.ReportingController == "lease-exporter" && ev.Regarding.Name == name {
			out = append(out, ev)
		}
	}
	slices.SortFunc(out, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	return out
}

func countReason(evs []eventsv1.Event, reason string) int {
	n := 0
	for _, ev := range evs {
		if ev.Reason == reason {
			n++
			if ev.Series != nil {
				n += int(ev.Series.Count) - 1
			}
		}
	}
	return n
}

// kubectlEvents runs real kubectl as an operator would: kubectl events --for lease/NAME -n NS.
// It is the control plane's own (1.36 on the default matrix); the older minors' bin dirs have
// none, and use the newest one built (kubectl talks to API servers a minor older or newer).
func kubectlEvents(t *testing.T, ns, name string) string {
	t.Helper()
	kubectl := filepath.Join(env.CP.AssetsDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		built, _ := filepath.Glob(filepath.Join(tools.CacheRoot(), "kube-binaries", "kubernetes-v*", "bin", "kubectl"))
		if len(built) == 0 {
			t.Fatalf("no kubectl in %s nor in the kube-binaries cache: build it with hack/kube-binaries/build.sh", env.CP.AssetsDir())
		}
		slices.SortFunc(built, func(a, b string) int { return slices.Compare(versionOf(a), versionOf(b)) })
		kubectl = built[len(built)-1]
	}
	cmd := exec.Command(kubectl, "--kubeconfig", env.CP.KubeconfigPath(),
		"events", "--for", "lease/"+name, "-n", ns)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl events: %v\n%s", err, out)
	}
	return string(out)
}

// versionOf is the Kubernetes version of a kube-binaries path, .../kubernetes-v1.36.3/bin/kubectl,
// as numbers to compare.
func versionOf(path string) []int {
	var out []int
	for _, f := range strings.Split(strings.TrimPrefix(filepath.Base(filepath.Dir(filepath.Dir(path))), "kubernetes-v"), ".") {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// historyOf is a lock's history from an exporter's JSON API as (holder, ended, rebuilt).
func historyOf(t *testing.T, exp *exporterproc.Exporter, ns, name string) ([]string, error) {
	t.Helper()
	d, body, err := getDetail(t, exp.URL(), ns, name)
	if err != nil {
		return nil, err
	}
	if d.History == nil {
		return nil, fmt.Errorf("no history: %s", body)
	}
	var out []string
	for _, tn := range d.History.Tenures {
		out = append(out, fmt.Sprintf("%s/%s/rebuilt=%v", tn.Holder, tn.Ended, tn.Rebuilt))
	}
	return out, nil
}

// A client-go elector fails over after a crash, then hands over gracefully: kubectl events
// shows both with the right reasons and notes. The exporter is then killed and restarted,
// and its page shows the transitions from before the restart, marked rebuilt.
func TestEventsRecordFailoverAndHandoverAndSurviveRestart(t *testing.T) {
	ns := newNamespace(t, "events")
	exp := startEventsExporter(t, ns, "writer")
	waitOneWriter(t, exp)
	a := startCandidate(t, ns, "orders", "orders-a", false) // crashes: releases nothing
	waitLeading(t, a)
	b := startCandidate(t, ns, "orders", "orders-b", true)
	a.Stop()
	waitLeading(t, b)
	c := startCandidate(t, ns, "orders", "orders-c", true)
	b.Stop() // releases: c takes the lock without waiting for expiry
	waitLeading(t, c)

	var out string
	testsuite.Eventually(t, deadline, poll, "kubectl events shows the failover and the handover", func() (bool, string) {
		out = kubectlEvents(t, ns, "orders")
		return strings.Count(out, "LeaderChanged") == 2 && strings.Count(out, "LeaseReleased") == 1, out
	})
	lines := strings.Split(out, "\n")
	want := []struct{ typ, reason, note string }{
		{"Warning", "LeaderChanged", `Leader changed from "orders-a" to "orders-b". The previous tenure lasted `},
		{"Warning", "LeaderChanged", `It ended: its lease expired. Without a leader for `},
		{"Normal", "LeaseReleased", `"orders-b" released the lock after holding it for `},
		{"Normal", "LeaderChanged", `Leader changed from "orders-b" to "orders-c". The previous tenure lasted `},
		{"Normal", "LeaderChanged", `It ended: it was released. Without a leader for `},
	}
	for _, w := range want {
		if !slices.ContainsFunc(lines, func(l string) bool {
			return strings.Contains(l, w.typ) && strings.Contains(l, w.reason) && strings.Contains(l, "Lease/orders") && strings.Contains(l, w.note)
		}) {
			t.Errorf("kubectl events has no %s %s line with %q:\n%s", w.typ, w.reason, w.note, out)
		}
	}
	evs := eventsFor(t, ns, "orders")
	for _, ev := range evs {
		if ev.Regarding.Kind != "Lease" || ev.Regarding.UID == "" || ev.ReportingInstance == "" || ev.Action == "" {
			t.Errorf("Event %s: regarding %+v, instance %q, action %q: want the Lease with its UID, an instance and an action",
				ev.Reason, ev.Regarding, ev.ReportingInstance, ev.Action)
		}
	}

	// Killed, not stopped: a crash keeps nothing. The restarted exporter lists the Events.
	exp.Kill()
	restarted := startEventsExporter(t, ns, "writer")
	wantHistory := []string{"orders-a/expired/rebuilt=true", "orders-b/released/rebuilt=true", "orders-c//rebuilt=false"}
	testsuite.Eventually(t, deadline, poll, "the restarted exporter shows the history from before the restart, rebuilt", func() (bool, string) {
		h, err := historyOf(t, restarted, ns, "orders")
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(h, wantHistory), fmt.Sprintf("history %v, want %v", h, wantHistory)
	})
	if !strings.Contains(restarted.Logs(), "rebuilt history from Events") {
		t.Errorf("restarted exporter's log does not say it rebuilt the history:\n%s", testsuite.Tail(restarted.Logs(), 20))
	}
	resp, err := http.Get(restarted.URL() + "/leases/" + ns + "/orders")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if strings.Count(page, "(rebuilt from Events)") != 2 {
		t.Errorf("the detail page marks %d tenures rebuilt, want 2", strings.Count(page, "(rebuilt from Events)"))
	}
}

// Two replicas: exactly one writes; a failover of their own election writes no Event twice,
// even for a change made while neither wrote, and loses none made after it; and the page of
// either replica shows the same history.
func TestEventsOneWriterAcrossReplicas(t *testing.T) {
	ns := newNamespace(t, "events-ha")
	x := startEventsExporter(t, ns, "writer")
	y := startEventsExporter(t, ns, "writer")
	first := waitOneWriter(t, x, y)
	survivor := y
	if first == y {
		survivor = x
	}
	a := startCandidate(t, ns, "jobs", "jobs-a", true)
	waitLeading(t, a)
	b := startCandidate(t, ns, "jobs", "jobs-b", true)
	a.Stop()
	waitLeading(t, b)
	testsuite.Eventually(t, deadline, poll, "the handover's Events are written", func() (bool, string) {
		evs := eventsFor(t, ns, "jobs")
		return countReason(evs, "LeaderChanged") == 1 && countReason(evs, "LeaseReleased") == 1, fmt.Sprintf("%d Events", len(evs))
	})

	// The writer dies, and b hands over to c before the survivor is elected (the dead
	// writer's Lease lasts 15 s): that change may go unwritten, but never twice. Once the
	// survivor writes, c hands over to d, written exactly once.
	first.Kill()
	c := startCandidate(t, ns, "jobs", "jobs-c", true)
	b.Stop()
	waitLeading(t, c)
	if got := waitOneWriter(t, survivor); got != survivor {
		t.Fatal("the surviving replica was not elected")
	}
	d := startCandidate(t, ns, "jobs", "jobs-d", true)
	c.Stop()
	waitLeading(t, d)
	changes := func(evs []eventsv1.Event) map[string]int {
		n := map[string]int{}
		for _, ev := range evs {
			if ev.Reason == "LeaderChanged" {
				n[ev.Note[:strings.Index(ev.Note, ".")]]++
			}
		}
		return n
	}
	testsuite.Eventually(t, deadline, poll, "the survivor writes c's handover to d", func() (bool, string) {
		n := changes(eventsFor(t, ns, "jobs"))
		return n[`Leader changed from "jobs-c" to "jobs-d"`] >= 1, fmt.Sprint(n)
	})
	time.Sleep(3 * time.Second) // room for a late duplicate from a retry to land
	n := changes(eventsFor(t, ns, "jobs"))
	for change, count := range n {
		if count != 1 {
			t.Errorf("%q written %d times, want once", change, count)
		}
	}
	for _, want := range []string{`Leader changed from "jobs-a" to "jobs-b"`, `Leader changed from "jobs-c" to "jobs-d"`} {
		if n[want] != 1 {
			t.Errorf("%q written %d times, want once (the writer was up): %v", want, n[want], n)
		}
	}
	t.Logf("the change while no replica wrote was written %d times", n[`Leader changed from "jobs-b" to "jobs-c"`])

	// The killed replica restarts; its page, rebuilt, and the survivor's, observed, agree:
	// the same holders, each tenure ended the same way, except that where no Event recorded
	// how a tenure ended (b's, if its handover fell between the writers) the rebuilt page
	// says unknown rather than guess.
	back := startEventsExporter(t, ns, "writer")
	testsuite.Eventually(t, deadline, poll, "both replicas' pages show the same history", func() (bool, string) {
		hb, err := historyOf(t, back, ns, "jobs")
		if err != nil {
			return false, err.Error()
		}
		hs, err := historyOf(t, survivor, ns, "jobs")
		if err != nil {
			return false, err.Error()
		}
		if len(hb) != 4 || len(hs) != 4 {
			return false, fmt.Sprintf("restarted %v, survivor %v: want a, b, c, d", hb, hs)
		}
		for i := range hb {
			rb, ro := strings.Split(hb[i], "/"), strings.Split(hs[i], "/")
			unwritten := rb[0] == "jobs-b" && n[`Leader changed from "jobs-b" to "jobs-c"`] == 0
			if rb[0] != ro[0] || rb[1] != ro[1] && !(unwritten && rb[1] == "unknown") {
				return false, fmt.Sprintf("restarted %v, survivor %v", hb, hs)
			}
		}
		return true, ""
	})
	if got := waitOneWriter(t, back, survivor); got != survivor {
		t.Error("the restarted replica took the writer's Lease from a healthy writer")
	}
}

// Events forbidden by RBAC: metrics and pages keep working, one log line names the missing
// permission, and the metric counts what was not written; nothing retries in a loop.
func TestEventsForbiddenKeepEverythingElseWorking(t *testing.T) {
	ns := newNamespace(t, "events-rbac")
	user := "events-forbidden"
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
	rbac := env.Client.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(ctx, user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctx, user, metav1.DeleteOptions{})
	})
	kubeconfig, err := env.CP.KubeconfigForUser(user)
	if err != nil {
		t.Fatal(err)
	}
	exp := startEventsExporter(t, ns, "writer", "--kubeconfig="+kubeconfig)
	waitOneWriter(t, exp)
	handovers(t, ns, "work", 3) // six Events to write, none allowed
	testsuite.Eventually(t, deadline, poll, "the refusals are counted and the lock still exported", func() (bool, string) {
		s, err := exp.Scrape()
		if err != nil {
			return false, err.Error()
		}
		// Each of the six counted once: the first refused, the rest not asked for (paused).
		dropped := s.Series("lease_exporter_events_dropped_total", map[string]string{"cause": "forbidden"})
		held, ok := s.Value("lease_held", ns, "work")
		return len(dropped) == 1 && dropped[0].Value == 6 && ok && held == 1,
			fmt.Sprintf("dropped %v, lease_held %v (%v)", dropped, held, ok)
	})
	logs := exp.Logs()
	if n := strings.Count(logs, "Kubernetes Events forbidden"); n != 1 || !strings.Contains(logs, "create and patch on events.events.k8s.io") {
		t.Errorf("%d lines say Events are forbidden, want exactly 1 naming the permission:\n%s", n, testsuite.Tail(logs, 30))
	}
	if !strings.Contains(logs, "cannot rebuild history from Events: grant the exporter's ServiceAccount list on events.events.k8s.io") {
		t.Errorf("the log does not say the history could not be rebuilt for lack of list on events:\n%s", testsuite.Tail(logs, 30))
	}
	if n := len(eventsFor(t, ns, "work")); n != 0 {
		t.Errorf("%d Events written without permission", n)
	}
	if err := exp.WaitReady(ctx, time.Second); err != nil {
		t.Errorf("not ready with Events forbidden: %v", err)
	}
}

// handovers starts two electors for the Lease ns/name and hands leadership over n times,
// each a graceful release to a fresh candidate: 2n leadership changes, an Event each to write.
func handovers(t *testing.T, ns, name string, n int) {
	t.Helper()
	ctx := context.Background()
	pool, err := election.StartPool(ctx, env.Client, ns, name, name, 2, election.Fast, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.StopAll)
	for i := range n {
		l := pool.Leader()
		for ; l == nil; l = pool.Leader() {
			time.Sleep(poll)
		}
		pool.Remove(l)
		c, err := election.Start(ctx, env.Client, ns, name, fmt.Sprintf("%s-new-%d", name, i), election.Fast, true)
		if err != nil {
			t.Fatal(err)
		}
		pool.Add(c)
		for pool.Leader() == nil || pool.Leader() == l {
			time.Sleep(poll)
		}
	}
}

// Issue 48 asked that a ResourceQuota's "exceeded quota" refusal of Events pause only its
// namespace. A real API server never sends one: Kubernetes exempts Events from ResourceQuota
// in both API groups (its quota registry ignores them), so docs/events.md says a quota cannot
// stop them and the exporter has no cause of its own for it. This pins that on every
// Kubernetes minor of the matrix: under a quota of no Events at all, counted by either name,
// the exporter's Events are written and nothing is dropped.
func TestEventsAreWrittenUnderAResourceQuotaOfNone(t *testing.T) {
	ns := newNamespace(t, "events-quota")
	ctx := context.Background()
	none := corev1.ResourceList{
		"count/events.events.k8s.io": resource.MustParse("0"),
		"count/events":               resource.MustParse("0"),
	}
	q, err := env.Client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-events"}, Spec: corev1.ResourceQuotaSpec{Hard: none}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No kube-controller-manager runs here to fill in the quota's status (the quota admission
	// refuses what a quota of unknown status governs): give it what the controller would.
	q.Status = corev1.ResourceQuotaStatus{Hard: none, Used: corev1.ResourceList{
		"count/events.events.k8s.io": resource.MustParse("0"),
		"count/events":               resource.MustParse("0"),
	}}
	if _, err := env.Client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	exp := startEventsExporter(t, ns, "writer")
	waitOneWriter(t, exp)
	handovers(t, ns, "work", 1)
	testsuite.Eventually(t, deadline, poll, "the handover's Events are written under the quota", func() (bool, string) {
		evs := eventsFor(t, ns, "work")
		return len(evs) >= 2, fmt.Sprintf("%d Events regarding %s/work", len(evs), ns)
	})
	s, err := exp.Scrape()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range s.Series("lease_exporter_events_dropped_total", nil) {
		if d.Value != 0 {
			t.Errorf("lease_exporter_events_dropped_total%v = %v under a quota Kubernetes does not apply to Events", d.Labels, d.Value)
		}
	}
}

// 5,000 node heartbeats expire at once (a zone outage). With the default classes no Event is
// written; with node heartbeats asked for, the token bucket holds and the drop counter says
// how many were dropped.
func TestEventsNodeHeartbeatStormIsBounded(t *testing.T) {
	env.Exclusive(t) // 5,000 expired heartbeats would show on every other test's node summary
	const nodes, burst = 5000, 25
	const ns = "kube-node-lease"
	quiet := startEventsExporter(t, ns, "quiet-writer")
	storm := startEventsExporter(t, ns, "storm-writer", "--events.classes=leader-election,node-heartbeat", "--events.qps=1", fmt.Sprintf("--events.burst=%d", burst))
	waitOneWriter(t, quiet)
	waitOneWriter(t, storm)
	created := time.Now()
	createHeartbeats(t, ns, nodes, 20)
	t.Cleanup(func() {
		_ = quiet.Stop()
		_ = storm.Stop()
		err := env.Client.CoordinationV1().Leases(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "lease-exporter.test/storm"})
		if err != nil {
			t.Errorf("delete the heartbeats: %v", err)
		}
	})
	var written, dropped float64
	testsuite.Eventually(t, 3*time.Minute, time.Second, "every expiry is written or counted as dropped", func() (bool, string) {
		s, err := storm.Scrape()
		if err != nil {
			return false, err.Error()
		}
		written, dropped = 0, 0
		for _, v := range s.Series("lease_exporter_events_written_total", map[string]string{"reason": "LeaseExpired"}) {
			written += v.Value
		}
		for _, v := range s.Series("lease_exporter_events_dropped_total", map[string]string{"cause": "rate_limited"}) {
			dropped += v.Value
		}
		return written+dropped == nodes, fmt.Sprintf("%v written, %v dropped", written, dropped)
	})
	elapsed := time.Since(created)
	if max := float64(burst) + elapsed.Seconds()*1; written > max {
		t.Errorf("%v LeaseExpired Events in %s, the bucket allows at most %v", written, elapsed.Round(time.Second), max)
	}
	t.Logf("%d heartbeats expired: %v Events written, %v dropped in %s", nodes, written, dropped, elapsed.Round(time.Second))
	s, err := quiet.Scrape()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"lease_exporter_events_written_total", "lease_exporter_events_dropped_total"} {
		for _, v := range s.Series(m, nil) {
			if v.Value != 0 {
				t.Errorf("the default classes: %s%v = %v, want 0", m, v.Labels, v.Value)
			}
		}
	}
}

// createHeartbeats creates n node-heartbeat Leases in ns renewed now with duration seconds,
// that nobody renews after, in parallel.
func createHeartbeats(t *testing.T, ns string, n int, seconds int32) {
	t.Helper()
	inParallel(t, n, 16, "create heartbeat", func(i int) error {
		holder := fmt.Sprintf("storm-node-%05d", i)
		now := metav1.NewMicroTime(time.Now())
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: holder, Labels: map[string]string{"lease-exporter.test/storm": "true"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now, AcquireTime: &now}}
		_, err := env.Client.CoordinationV1().Leases(ns).Create(context.Background(), l, metav1.CreateOptions{})
		return err
	})
}

// inParallel runs do(0..n-1) on workers goroutines and fails t with what (and the error) if
// any call failed: creating many objects one request at a time would take minutes.
func inParallel(t *testing.T, n, workers int, what string, do func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range work {
				if err := do(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("%s: %v", what, err)
	}
}

// Sharded: each shard elects its own writer (its Lease ends -shard-<i>) and writes only for
// its own locks, so every change is written once, by the shard that owns the lock.
func TestEventsEachShardWritesOnlyItsOwnLocks(t *testing.T) {
	ns := newNamespace(t, "events-shards")
	shards := []*exporterproc.Exporter{
		startEventsExporter(t, ns, "writer", "--shard=0", "--total-shards=2"),
		startEventsExporter(t, ns, "writer", "--shard=1", "--total-shards=2"),
	}
	for _, s := range shards {
		waitOneWriter(t, s) // each alone in its shard's election
	}
	ctx := context.Background()
	leases := env.Client.CoordinationV1().Leases(ns)
	owned := [2]int{}
	var names []string
	for i := range 8 {
		name := fmt.Sprintf("lock-%d", i)
		names = append(names, name)
		owned[sharding.Of(ns, name, 2)]++
		holder, seconds, now := "a", int32(60), metav1.NewMicroTime(time.Now())
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now, AcquireTime: &now}}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if owned[0] == 0 || owned[1] == 0 {
		t.Fatalf("the locks fall to shards %v: the test needs both", owned)
	}
	testsuite.Eventually(t, deadline, poll, "each shard exports its locks held by a", func() (bool, string) {
		for _, name := range names {
			exp := shards[sharding.Of(ns, name, 2)]
			s, err := exp.Scrape()
			if err != nil {
				return false, err.Error()
			}
			if held, ok := s.Value("lease_held", ns, name); !ok || held != 1 {
				return false, name + " not exported yet"
			}
		}
		return true, ""
	})
	for _, name := range names { // b takes every lock over
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		holder, now := "b", metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime = &holder, &now, &now
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testsuite.Eventually(t, deadline, poll, "each shard writes one LeaderChanged per lock it owns", func() (bool, string) {
		var got [2]float64
		for i, s := range shards {
			sc, err := s.Scrape()
			if err != nil {
				return false, err.Error()
			}
			for _, v := range sc.Series("lease_exporter_events_written_total", map[string]string{"reason": "LeaderChanged", "shard": fmt.Sprint(i)}) {
				got[i] += v.Value
			}
		}
		return got[0] == float64(owned[0]) && got[1] == float64(owned[1]), fmt.Sprintf("written %v, owned %v", got, owned)
	})
	time.Sleep(2 * time.Second)
	for _, name := range names {
		if n := countReason(eventsFor(t, ns, name), "LeaderChanged"); n != 1 {
			t.Errorf("%s: %d LeaderChanged Events, want 1", name, n)
		}
	}
}
