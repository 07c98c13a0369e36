package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// leaseCandidates returns the LeaseCandidates of the Lease ns/name (coordinated leader
// election) as the exporter's detail carries them, judged at at: fresh by the exporter's
// rule from their renewTime, as the exporter judges a candidate it first sees in a list.
// It reads v1beta1, else v1alpha2, as the exporter does; nil, with no error, when the API
// server serves neither.
func leaseCandidates(ctx context.Context, src *source, ns, name, preferred string, at time.Time) ([]api.Candidate, error) {
	var recs []*lock.Candidate
	beta, err := src.client.CoordinationV1beta1().LeaseCandidates(ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, c := range beta.Items {
			if c.Spec.LeaseName == name {
				sp := &c.Spec
				recs = append(recs, lock.ProjectCandidate(&c.ObjectMeta, sp.LeaseName, sp.BinaryVersion, sp.EmulationVersion, string(sp.Strategy), sp.RenewTime, sp.PingTime))
			}
		}
	} else if apierrors.IsNotFound(err) {
		alpha, aerr := src.client.CoordinationV1alpha2().LeaseCandidates(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(aerr) {
			return nil, nil
		}
		if err = aerr; err == nil {
			for _, c := range alpha.Items {
				if c.Spec.LeaseName == name {
					sp := &c.Spec
					recs = append(recs, lock.ProjectCandidate(&c.ObjectMeta, sp.LeaseName, sp.BinaryVersion, sp.EmulationVersion, string(sp.Strategy), sp.RenewTime, sp.PingTime))
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("<unknown: %s>", explain(&apiError{verb: "list", resource: "leasecandidates", group: "coordination.k8s.io", namespace: ns, err: err}))
	}
	out := []api.Candidate{}
	for _, c := range recs {
		out = append(out, api.CandidateJSON(lock.ObserveCandidate(nil, c, at.UnixMicro(), false), preferred, at))
	}
	slices.SortFunc(out, func(a, b api.Candidate) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
