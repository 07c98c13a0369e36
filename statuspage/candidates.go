package statuspage

import (
	"cmp"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// candidatesOf returns the LeaseCandidates of the Lease namespace/name, by name; nil when
// LeaseCandidates are not watched (so "none" can be told from "not watched").
func candidatesOf(src Source, namespace, name, preferred string, at time.Time) []api.Candidate {
	if !src.WatchingCandidates() {
		return nil
	}
	out := []api.Candidate{}
	src.RangeCandidates(func(c *lock.Candidate) {
		if c.Namespace() == namespace && c.LeaseName == name {
			out = append(out, api.CandidateJSON(c, preferred, at))
		}
	})
	slices.SortFunc(out, func(a, b api.Candidate) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
