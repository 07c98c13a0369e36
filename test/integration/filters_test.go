package integration_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// filterCase is one exporter started with a filter flag, and what that flag lets through.
type filterCase struct {
	flag    string
	exp     *exporterproc.Exporter
	inScope func(ns string, labels map[string]string) bool
}

// A filtered-out Lease must never be exported, not even briefly while it is being renewed:
// the filters are applied on the server side (field and label selectors, per-namespace
// watches), and this checks them through the real binary against a real API server.
func TestNamespaceAndSelectorFilters(t *testing.T) {
	ctx := context.Background()
	nsA, nsB, nsC, nsD := newNamespace(t, "filter-a"), newNamespace(t, "filter-b"), newNamespace(t, "filter-c"), newNamespace(t, "filter-d")

	// Two Leases per namespace, one labelled tier=gold, each renewed by a real candidate so
	// filtered-out Leases keep producing watch events during the whole test.
	labels := map[string]map[string]string{} // "ns/name" -> labels, kept in step with the API
	for _, ns := range []string{nsA, nsB, nsC, nsD} {
		for name, lbl := range map[string]map[string]string{"gold": {"tier": "gold"}, "plain": nil} {
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}}
			if _, err := env.Client.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create lease %s/%s: %v", ns, name, err)
			}
			labels[ns+"/"+name] = lbl
			c, err := election.Start(ctx, env.Client, ns, name, ns+"-"+name, election.Fast, false)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Stop)
		}
	}

	cases := []*filterCase{
		{flag: "--namespaces=" + nsA + "," + nsB, inScope: func(ns string, _ map[string]string) bool { return ns == nsA || ns == nsB }},
		{flag: "--namespaces-exclude=" + nsC, inScope: func(ns string, _ map[string]string) bool { return ns != nsC }},
		{flag: "--lease-selector=tier=gold", inScope: func(_ string, l map[string]string) bool { return l["tier"] == "gold" }},
	}
	for _, c := range cases {
		c.exp = env.StartReady(t, env.Bin, c.flag)
	}

	// Every scrape is checked for Leases outside the filter; complete additionally wants each
	// of our in-scope Leases exported with its candidate as holder. grace names a Lease that
	// may still be exported while a relabel propagates.
	check := func(complete bool, grace string) error {
		for _, c := range cases {
			s, err := c.exp.Scrape()
			if err != nil {
				return fmt.Errorf("%s: scrape: %w", c.flag, err)
			}
			for key := range leaseKeys(s) {
				ns, name, _ := strings.Cut(key, "/")
				// Leases of other tests and kube-system carry no tier label: judge them unlabelled.
				if !c.inScope(ns, labels[key]) && key != grace {
					p := newProbe(c.exp, ns, name)
					p.last = s
					return brokenf("exporter %s exports a Lease outside its filter:%s", c.flag, p.describe())
				}
			}
			for key, l := range labels {
				ns, name, _ := strings.Cut(key, "/")
				match := map[string]string{"namespace": ns, "lease": name, "holder": ns + "-" + name}
				if complete && c.inScope(ns, l) && len(s.Series("lease_info", match)) != 1 {
					p := newProbe(c.exp, ns, name)
					p.last = s
					return fmt.Errorf("exporter %s does not show %s held by %s-%s:%s", c.flag, key, ns, name, p.describe())
				}
			}
		}
		return nil
	}
	eventually(t, "every exporter shows its in-scope Leases", func() error { return check(true, "") })

	// Several scrapes while every candidate renews (1s retry period). The API server must
	// show every Lease renewed in the window, or the check exercised nothing.
	before := renewTimes(t, labels)
	for range 8 {
		if err := check(true, ""); err != nil {
			t.Fatalf("steady state: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for key, t1 := range renewTimes(t, labels) {
		if !t1.After(before[key]) {
			ns, name, _ := strings.Cut(key, "/")
			newProbe(cases[0].exp, ns, name).fatalf(t, "not renewed during the steady-state scrapes, so the filters were not exercised")
		}
	}

	// Relabelling moves a Lease into or out of the selector: the watch must add or drop it.
	relabel(t, nsA, "plain", "gold", labels)
	relabel(t, nsD, "gold", "silver", labels)
	eventually(t, "the selector follows relabelled Leases", func() error {
		if err := check(true, nsD+"/gold"); err != nil {
			return err
		}
		s, err := cases[2].exp.Scrape()
		if err != nil {
			return err
		}
		if leaseKeys(s)[nsD+"/gold"] {
			p := newProbe(cases[2].exp, nsD, "gold")
			p.last = s
			return fmt.Errorf("relabelled tier=silver but still exported:%s", p.describe())
		}
		return nil
	})
	if err := check(true, ""); err != nil {
		t.Fatalf("after relabel: %v", err)
	}
}

// leaseKeys returns "namespace/lease" of every per-lease series of any metric.
func leaseKeys(s *exporterproc.Scrape) map[string]bool {
	keys := map[string]bool{}
	for name := range s.Families {
		// lease_expected_present names the locks declared with --expect, present or not.
		if name == "lease_expected_present" {
			continue
		}
		for _, sm := range s.Series(name, nil) {
			// A self-metric may carry a namespace without being about one lock
			// (lease_exporter_lock_deletions_total); a lock's series name it with lease.
			ns, okNS := sm.Labels["namespace"]
			lease, okLease := sm.Labels["lease"]
			if okNS && okLease {
				keys[ns+"/"+lease] = true
			}
		}
	}
	return keys
}

// renewTimes reads spec.renewTime of the given Leases from the API server.
func renewTimes(t *testing.T, keys map[string]map[string]string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	for key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		l, err := env.Client.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get lease %s: %v", key, err)
		}
		if l.Spec.RenewTime != nil {
			out[key] = l.Spec.RenewTime.Time
		}
	}
	return out
}

// relabel sets tier on a Lease with a merge patch, as `kubectl label` does: unlike an
// update it cannot conflict with the candidate renewing the Lease every second.
func relabel(t *testing.T, ns, name, tier string, labels map[string]map[string]string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{"tier":%q}}}`, tier)
	_, err := env.Client.CoordinationV1().Leases(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("relabel %s/%s: %v", ns, name, err)
	}
	labels[ns+"/"+name] = map[string]string{"tier": tier}
}

// eventually polls cond until it returns nil; a broken error fails at once. Errors carry
// their own diagnosis.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		err := cond()
		switch {
		case err == nil:
			return
		case errors.As(err, new(broken)):
			t.Fatalf("%s: %v", what, err)
		case time.Now().After(end):
			t.Fatalf("%s: not within %s: %v", what, deadline, err)
		}
		time.Sleep(poll)
	}
}
