package collector

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seriesShape is a series' name and its label names, sorted: what the README's example must
// get right (the values are an example's).
func seriesShape(line string) (name string, shape string, ok bool) {
	m := regexp.MustCompile(`^([a-z_:]+)\{([^}]*)\} `).FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	var labels []string
	for _, pair := range regexp.MustCompile(`([a-z_]+)="`).FindAllStringSubmatch(m[2], -1) {
		labels = append(labels, pair[1])
	}
	slices.Sort(labels)
	return m[1], m[1] + "{" + strings.Join(labels, ",") + "}", true
}

// TestREADMEExampleIsTheDefaultSet: the example under the README's "What it exports" shows
// only series the default set emits, with their label names, and every per-lease family the
// default set emits for a leader-election Lease (after a live renewal, so the clock skew too).
func TestREADMEExampleIsTheDefaultSet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## What it exports")
	if !ok {
		t.Fatal(`README has no "## What it exports"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```\n")
	if !ok {
		t.Fatal("README's What it exports has no example block")
	}
	block, _, _ = strings.Cut(block, "\n```")
	documented := map[string]bool{}
	documentedNames := map[string]bool{}
	var order []string
	for _, line := range strings.Split(block, "\n") {
		name, shape, ok := seriesShape(line)
		if !ok {
			t.Errorf("README example line is not a series: %q", line)
			continue
		}
		documented[shape], documentedNames[name] = true, true
		order = append(order, name)
	}
	if !slices.IsSorted(order) {
		t.Errorf("the README's example is not in the exporter's order (families by name): %v", order)
	}

	start := time.Now()
	clock := func() time.Time { return scrapeTime.Add(time.Since(start)) }
	v, client := syncedViewWithClock(t, clock,
		lease("kube-node-lease", "node-1", held("node-1", 5*time.Second, 40)),
		lease("kube-node-lease", "node-2", held("node-2", 60*time.Second, 40)),
		lease("orders", "orders-worker", held("orders-worker-1", time.Second, 15), transitions(3)))
	// A live renewal (events are live a second after the watch opens), so the holder's clock
	// skew is known, as it is for a running elector.
	time.Sleep(1100 * time.Millisecond)
	l, err := client.CoordinationV1().Leases("orders").Get(context.Background(), "orders-worker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	renew := metav1.NewMicroTime(clock())
	l.Spec.RenewTime = &renew
	if _, err := client.CoordinationV1().Leases("orders").Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settings := Settings{Now: clock}
	var got string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got = exposition(t, New(v, settings), NewStatus(v, settings))
		if strings.Contains(got, "lease_holder_clock_skew_seconds{") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no clock skew after a live renewal:\n%s", got)
		}
	}
	emitted := map[string]bool{}
	for _, line := range strings.Split(got, "\n") {
		name, shape, ok := seriesShape(line)
		if !ok {
			continue
		}
		emitted[shape] = true
		if strings.Contains(line, `class="leader-election"`) && strings.Contains(line, `lease="`) && !documentedNames[name] {
			t.Errorf("the default set emits %s for a leader-election Lease; the README's example lacks it", name)
		}
	}
	for shape := range documented {
		if !emitted[shape] {
			t.Errorf("the README's example shows %s, which the default set does not emit with these labels", shape)
		}
	}
}
