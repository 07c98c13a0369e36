package integration_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// Issue 48: a tenant who may create Events cannot crash the rebuild nor forge history from
// outside the lock's namespace. alpha releases the lock to a holder whose identity words the
// note's own sentences; forged Events (another namespace, wrong kind, wrong UID, unknown
// reason, a note over 1 KiB) and 500 Events of 1 MiB through core/v1 without eventTime are
// then created, and the exporter restarted: its rebuilt history is alpha's released tenure and
// nothing forged, it is Ready, and its peak RSS stays under half the chart's 256 MiB limit.
func TestEventsRebuildIgnoresForgedAndOversizedEvents(t *testing.T) {
	ns, other := newNamespace(t, "events-forged"), newNamespace(t, "events-tenant")
	exp := startEventsExporter(t, ns, "writer")
	waitOneWriter(t, exp)
	hostile := `mallory" The previous tenure lasted 99h0m0s. It ended: it was released.`
	a := startCandidate(t, ns, "orders", "alpha", true)
	waitLeading(t, a)
	time.Sleep(2 * time.Second)
	a.Stop()
	m := startCandidate(t, ns, "orders", hostile, true)
	waitLeading(t, m)
	testsuite.Eventually(t, deadline, poll, "the exporter wrote the change to the hostile holder", func() (bool, string) {
		evs := eventsFor(t, ns, "orders")
		// alpha's release, then the change to the hostile holder (as in
		// TestEventsOneWriterAcrossReplicas).
		return countReason(evs, "LeaseReleased") >= 1 && countReason(evs, "LeaderChanged") >= 1, fmt.Sprintf("%d Events", len(evs))
	})
	lease, err := env.Client.CoordinationV1().Leases(ns).Get(context.Background(), "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	forged := `Leader changed from "alpha" to "forged". The previous tenure lasted 99h0m0s. It ended: it was released.`
	ref := func(kind, ns string, uid types.UID) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: kind, APIVersion: "coordination.k8s.io/v1", Namespace: ns, Name: "orders", UID: uid}
	}
	for i, f := range []struct {
		in, reason string
		regarding  corev1.ObjectReference
	}{
		{other, "LeaderChanged", ref("Lease", ns, lease.UID)},
		{ns, "LeaderChanged", ref("ConfigMap", ns, lease.UID)},
		{ns, "LeaderChanged", ref("Lease", ns, "0b7d2a8e-4c1f-4d2a-9e3b-000000000009")},
		{ns, "LeaderStolen", ref("Lease", ns, lease.UID)},
	} {
		ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("forged.%d", i)}, EventTime: metav1.NowMicro(),
			ReportingController: "lease-exporter", ReportingInstance: "tenant", Action: "Observed", Reason: f.reason, Note: forged,
			Type: corev1.EventTypeNormal, Regarding: f.regarding}
		if _, err := env.Client.EventsV1().Events(f.in).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("forged Event %d: %v", i, err)
		}
	}
	start := time.Now()
	big := forged + strings.Repeat(" ", 1<<20)
	createCoreEvents(t, ns, ref("Lease", ns, lease.UID), 500, big)
	createCoreEvents(t, ns, ref("Lease", ns, lease.UID), 1, forged+strings.Repeat(" ", 1100))
	t.Logf("created 501 oversized Events in %s", time.Since(start).Round(time.Second))

	exp.Kill()
	restartedAt := time.Now()
	restarted := startEventsExporter(t, ns, "writer")
	want := []string{"alpha/released/rebuilt=true", hostile + "//rebuilt=false"}
	testsuite.Eventually(t, 3*deadline, poll, "the restarted exporter rebuilt alpha's tenure and nothing forged", func() (bool, string) {
		if !strings.Contains(restarted.Logs(), "rebuilt history from Events") {
			return false, "not rebuilt yet"
		}
		h, err := historyOf(t, restarted, ns, "orders")
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(h, want), fmt.Sprintf("history %q, want %q", h, want)
	})
	t.Logf("rebuilt %s after the restart", time.Since(restartedAt).Round(time.Second))
	d, body, err := getDetail(t, restarted.URL(), ns, "orders")
	if err != nil {
		t.Fatal(err)
	}
	// The hostile holder's own identity holds "99h0m0s": what must not appear is a holder
	// named by a forged Event, or alpha's tenure read from the hostile holder's words.
	if strings.Contains(body, `"forged"`) {
		t.Errorf("the JSON API shows a holder only forged Events name:\n%s", body)
	}
	if held := d.History.Tenures[0]; held.Holder != "alpha" || held.To == nil || held.To.Sub(held.From) > time.Minute {
		t.Errorf("alpha's tenure rebuilt as %+v, want the few seconds it held", held)
	}
	if err := restarted.WaitReady(ctx, 5*time.Second); err != nil {
		t.Errorf("the restarted exporter is not Ready: %v", err)
	}
	if hwm := peakRSS(t, restarted); hwm > 128<<20 {
		t.Errorf("the restarted exporter peaked at %d MiB RSS, want under 128 MiB", hwm>>20)
	} else {
		t.Logf("peak RSS of the restarted exporter: %d MiB", hwm>>20)
	}
	logs := restarted.Logs()
	// The Event in the tenant's namespace is not even listed: this exporter watches (and
	// rebuilds) only ns. The namespace check itself is events' unit test's.
	for _, want := range []string{"skipped_oversized=501", "skipped_unknown_lock=2", "skipped_reason=1", "skipped_unreadable=0"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the rebuild's log line lacks %s:\n%s", want, testsuite.Tail(logs, 10))
		}
	}
}

// createCoreEvents creates n Events through core/v1 without eventTime, which has no bound on
// the message, as the exporter's and regarding ref, each with message note.
func createCoreEvents(t *testing.T, ns string, ref corev1.ObjectReference, n int, note string) {
	t.Helper()
	inParallel(t, n, 4, "create a 1 MiB core/v1 Event", func(i int) error {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "big."}, InvolvedObject: ref,
			Reason: "LeaderChanged", Message: note, Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "lease-exporter"},
			ReportingController: "lease-exporter", ReportingInstance: strconv.Itoa(i), FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1}
		_, err := env.Client.CoreV1().Events(ns).Create(context.Background(), ev, metav1.CreateOptions{})
		return err
	})
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(t *testing.T, exp *exporterproc.Exporter) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", exp.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
