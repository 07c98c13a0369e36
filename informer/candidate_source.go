package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"

	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/lease-exporter/lease-exporter/lock"
)

// candidateVersions are the LeaseCandidate versions the exporter can read, preferred first:
// 1.33+ serve v1beta1 (when enabled; 1.36 says it is deprecated, gone in 1.39), 1.32+ also
// v1alpha2. Which one a cluster serves is found by discovery, never assumed.
var candidateVersions = []string{"v1beta1", "v1alpha2"}

const candidateResource = "leasecandidates"

// candidateSource is the source of LeaseCandidates in the version discovery found.
type candidateSource struct{ version string }

var _ source[*lock.Candidate] = candidateSource{}

func (candidateSource) resource() string { return candidateResource + ".coordination.k8s.io" }

func (s candidateSource) object() runtime.Object {
	if s.version == "v1alpha2" {
		return &coordinationv1alpha2.LeaseCandidate{}
	}
	return &coordinationv1beta1.LeaseCandidate{}
}

func (s candidateSource) list(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions, keep keepFunc) (runtime.Object, error) {
	if s.version == "v1alpha2" {
		list, err := c.List.CoordinationV1alpha2().LeaseCandidates(namespace).List(ctx, opts)
		if err == nil && keep != nil {
			list.Items = keepItems(list.Items, func(l *coordinationv1alpha2.LeaseCandidate) bool { return keep(l.Namespace, l.Spec.LeaseName) })
		}
		return list, err
	}
	list, err := c.List.CoordinationV1beta1().LeaseCandidates(namespace).List(ctx, opts)
	if err == nil && keep != nil {
		list.Items = keepItems(list.Items, func(l *coordinationv1beta1.LeaseCandidate) bool { return keep(l.Namespace, l.Spec.LeaseName) })
	}
	return list, err
}

func (s candidateSource) watch(ctx context.Context, c Clients, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	if s.version == "v1alpha2" {
		return c.Watch.CoordinationV1alpha2().LeaseCandidates(namespace).Watch(ctx, opts)
	}
	return c.Watch.CoordinationV1beta1().LeaseCandidates(namespace).Watch(ctx, opts)
}

func (candidateSource) decode(obj any) (*lock.Candidate, bool) {
	switch lc := obj.(type) {
	case *coordinationv1beta1.LeaseCandidate:
		sp := &lc.Spec
		return lock.ProjectCandidate(&lc.ObjectMeta, sp.LeaseName, sp.BinaryVersion, sp.EmulationVersion, string(sp.Strategy), sp.RenewTime, sp.PingTime), true
	case *coordinationv1alpha2.LeaseCandidate:
		sp := &lc.Spec
		return lock.ProjectCandidate(&lc.ObjectMeta, sp.LeaseName, sp.BinaryVersion, sp.EmulationVersion, string(sp.Strategy), sp.RenewTime, sp.PingTime), true
	}
	return nil, false
}

// errCandidatesUnavailable is why LeaseCandidates are not watched: not served, forbidden, or
// the credentials rejected.
var errCandidatesUnavailable = errors.New("LeaseCandidates unavailable")

// servedCandidateVersion returns the preferred LeaseCandidate version the API server serves with
// list and watch, after checking with one small list per namespace that the exporter may read
// it. The error wraps errCandidatesUnavailable when the API is not served, is forbidden or
// the credentials are rejected, and
// is anything else (the API server unreachable) otherwise.
func servedCandidateVersion(ctx context.Context, c Clients, namespaces []string) (string, error) {
	version := ""
	for _, v := range candidateVersions {
		resources, err := c.List.Discovery().ServerResourcesForGroupVersion("coordination.k8s.io/" + v)
		if apierrors.IsNotFound(err) {
			continue
		}
		// Unauthorized too: a rejected token must not stop the exporter (it stays up, reports
		// the failing Lease watch and recovers when the credentials do); candidates stay off
		// until a restart, like a forbidden list.
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			return "", fmt.Errorf("%w: discover coordination.k8s.io/%s: %w", errCandidatesUnavailable, v, err)
		}
		if err != nil {
			return "", fmt.Errorf("discover coordination.k8s.io/%s: %w", v, err)
		}
		if i := slices.IndexFunc(resources.APIResources, func(r metav1.APIResource) bool {
			return r.Name == candidateResource && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch")
		}); i >= 0 {
			version = v
			break
		}
	}
	if version == "" {
		return "", fmt.Errorf("%w: coordination.k8s.io serves none of %v", errCandidatesUnavailable, candidateVersions)
	}
	src := candidateSource{version}
	for _, ns := range namespaces {
		_, err := src.list(ctx, c, ns, metav1.ListOptions{Limit: 1}, nil)
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) {
			return "", fmt.Errorf("%w: list %s/%s: %w", errCandidatesUnavailable, src.resource(), version, err)
		}
		if err != nil {
			return "", fmt.Errorf("list %s/%s: %w", src.resource(), version, err)
		}
	}
	return version, nil
}

// orderings: none; nothing walks LeaseCandidates in an order.
func (candidateSource) orderings() []*ordering[*lock.Candidate] { return nil }
