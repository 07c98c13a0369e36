package collector

import (
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Build makes one collector per row of the table, in its order, each from the one Settings:
// the expected locks' only with --expect, and every one on the settings' clock.
func TestBuildMakesTheTablesCollectors(t *testing.T) {
	clock := func() time.Time { return scrapeTime }
	without := Build(nil, Settings{Now: clock})
	with := Build(nil, Settings{Now: clock, Shard: "1", Expected: []lock.Ref{{Namespace: "ns", Name: "l"}}})
	if len(without.Registered) != len(registered)-1 || len(with.Registered) != len(registered) {
		t.Fatalf("%d collectors without --expect and %d with, want %d and %d", len(without.Registered), len(with.Registered), len(registered)-1, len(registered))
	}
	if _, ok := with.Registered[len(registered)-1].(*ExpectedCollector); !ok {
		t.Errorf("the last collector with --expect is a %T, want *ExpectedCollector", with.Registered[len(registered)-1])
	}
	if !with.Text.now().Equal(scrapeTime) || !with.Leases.now().Equal(scrapeTime) {
		t.Error("the per-lock collectors do not run on the settings' clock")
	}
	for _, c := range with.Registered {
		switch c := c.(type) {
		case *StatusCollector:
			if !c.now().Equal(scrapeTime) {
				t.Error("the status collector does not run on the settings' clock")
			}
		case *CandidateCollector:
			if !c.now().Equal(scrapeTime) {
				t.Error("the candidate collector does not run on the settings' clock")
			}
		}
	}
	if Build(nil, Settings{}).Leases.now().IsZero() {
		t.Error("without a clock the collectors have none: want time.Now")
	}
}
