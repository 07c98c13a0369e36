package collector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWatchLifecycle drives one Lease through holder changes and deletion on the informer's
// watch and checks the exposition after each step.
func TestWatchLifecycle(t *testing.T) {
	ctx := context.Background()
	v, client := syncedViewWithClient(t, lease("team-a", "ctrl", held("a", time.Second, 15)))
	c := []prometheus.Collector{New(v, Settings{Now: func() time.Time { return scrapeTime }}), NewStatus(v, Settings{Now: func() time.Time { return scrapeTime }})}
	leases := client.CoordinationV1().Leases("team-a")
	for _, holder := range []string{"b", "", "c"} {
		l, err := leases.Get(ctx, "ctrl", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h := holder
		l.Spec.HolderIdentity = &h
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// a -> b and "" -> c are changes of leadership; the release b -> "" is not (client-go does
	// not count it either), so a graceful handover counts once.
	waitFor(t, c, `lease_observed_holder_changes_total{class="leader-election",kind="Lease",lease="ctrl",namespace="team-a"} 2`, true)
	waitFor(t, c, `lease_info{class="leader-election",holder="c",kind="Lease",lease="ctrl",namespace="team-a",owner_kind="",owner_name="",preferred_holder="",strategy=""} 1`, true)

	if err := leases.Delete(ctx, "ctrl", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, `namespace="team-a"`, false)
	waitFor(t, c, `lease_exporter_leases{class="leader-election"} 0`, true)
}

// waitFor polls the exposition until it contains line (present) or no longer does.
func waitFor(t *testing.T, c []prometheus.Collector, line string, present bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := exposition(t, c...)
		if strings.Contains(got, line) == present {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q present=%v; exposition:\n%s", line, present, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
