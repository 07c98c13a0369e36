package collector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lease-exporter/lease-exporter/lock"
)

// TestExpectedPresentOnlyForTheDeclaredKindNamespaceAndName: a lock counts as present only
// when a lock of the same kind, namespace and name is in the view; a same-named lock of
// another kind or namespace does not stand in for it.
func TestExpectedPresentOnlyForTheDeclaredKindNamespaceAndName(t *testing.T) {
	v := staticView{synced: true, asOf: scrapeTime, leases: []*lock.Lease{
		lock.Project(lease("kube-system", "kube-scheduler", held("a_1", 0, 15))),
		lock.Project(lease("team-a", "worker", held("b_2", 0, 15))),
	}}
	c := NewExpected(v, Settings{Expected: []lock.Ref{
		{Kind: lock.KindLease, Namespace: "kube-system", Name: "kube-scheduler"},
		{Kind: lock.KindLease, Namespace: "kube-system", Name: "kube-controller-manager"},
		{Kind: lock.KindConfigMap, Namespace: "team-a", Name: "worker"},
		{Kind: lock.KindLease, Namespace: "team-b", Name: "worker"},
	}})
	want := `# HELP lease_expected_present Whether a lock declared with --expect exists (1) or not (0), as of the last update of the exporter's view.
# TYPE lease_expected_present gauge
lease_expected_present{kind="ConfigMap",lease="worker",namespace="team-a"} 0
lease_expected_present{kind="Lease",lease="kube-controller-manager",namespace="kube-system"} 0
lease_expected_present{kind="Lease",lease="kube-scheduler",namespace="kube-system"} 1
lease_expected_present{kind="Lease",lease="worker",namespace="team-b"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// TestExpectedSilentUntilSynced: before the initial list every lock would look missing, so
// nothing is exported (LeaseMissing then has nothing to fire on).
func TestExpectedSilentUntilSynced(t *testing.T) {
	c := NewExpected(staticView{}, Settings{Expected: []lock.Ref{{Kind: lock.KindLease, Namespace: "kube-system", Name: "kube-scheduler"}}})
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d series before sync, want 0", n)
	}
}
