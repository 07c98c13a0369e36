package statuspage

import (
	"cmp"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// Candidate is one LeaseCandidate of a coordinated election (KEP-4355): a component that
// stands for the Lease, the versions it runs and how recently it renewed.
type Candidate struct {
	Name             string `json:"name"`
	BinaryVersion    string `json:"binary_version"`
	EmulationVersion string `json:"emulation_version"`
	Strategy         string `json:"strategy"`
	// Fresh is lock.Candidate.Fresh: seen renewing within lock.CandidateFreshness (10 min).
	Fresh             bool       `json:"fresh"`
	RenewTime         *time.Time `json:"renew_time"`
	ObservedRenewTime *time.Time `json:"observed_renew_time"`
	PingTime          *time.Time `json:"ping_time"`
	// Preferred: the API server names this candidate the Lease's spec.preferredHolder.
	Preferred bool `json:"preferred"`
}

// candidatesOf returns the LeaseCandidates of the Lease namespace/name, by name; nil when
// the view does not watch LeaseCandidates (so "none" can be told from "not watched").
func candidatesOf(view informer.View, namespace, name, preferred string, at time.Time) []Candidate {
	cv, ok := view.(informer.CandidateView)
	if !ok || !cv.WatchingCandidates() {
		return nil
	}
	atµ := at.UnixMicro()
	out := []Candidate{}
	cv.RangeCandidates(func(c *lock.Candidate) {
		if c.Namespace() != namespace || c.LeaseName != name {
			return
		}
		cd := Candidate{Name: c.Name(), BinaryVersion: c.BinaryVersion, EmulationVersion: c.EmulationVersion,
			Strategy: c.Strategy, Fresh: c.Fresh(atµ), Preferred: preferred != "" && c.Name() == preferred}
		if c.HasRenewTime {
			cd.RenewTime, cd.ObservedRenewTime = timeOf(c.RenewTime), timeOf(c.ObservedRenewTime)
		}
		if c.HasPingTime {
			cd.PingTime = timeOf(c.PingTime)
		}
		out = append(out, cd)
	})
	slices.SortFunc(out, func(a, b Candidate) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
