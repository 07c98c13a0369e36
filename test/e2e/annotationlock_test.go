package e2e

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// TestAnnotationLockNoLeader runs two copies of the Python client's ConfigMapLock elector
// and stops both: nobody renews the ConfigMap's leader annotation, the lock expires, and
// LeaseNoLeader pages for it (kind ConfigMap) through the shipped rule, real Prometheus and
// Alertmanager, exactly as for a Lease.
func TestAnnotationLockNoLeader(t *testing.T) {
	env.Shared(t)
	if err := election.CheckPython(false); err != nil {
		t.Fatal(err)
	}
	const ns, lock = "e2e-py-configmap", "py-lock"
	newScenario(t, ns, lock)
	t.Cleanup(func() { // its series (and so the alert) end with the lock
		_ = env.Client.CoreV1().ConfigMaps(ns).Delete(context.Background(), lock, metav1.DeleteOptions{})
	})
	var electors []*election.PythonElector
	for _, id := range []string{"py-a", "py-b"} {
		e, err := election.StartPython(election.PythonOptions{Kubeconfig: env.CP.KubeconfigPath(), Dir: t.TempDir(),
			Namespace: ns, Name: lock, Identity: id, Lock: election.PythonConfigMap,
			LeaseDuration: 6, RenewDeadline: 4, RetryPeriod: 1})
		if err != nil {
			t.Fatal(err)
		}
		electors = append(electors, e)
		t.Cleanup(func() {
			e.Kill()
			if t.Failed() {
				t.Logf("===== python elector %s log =====\n%s", id, testsuite.Tail(e.Log(), 30))
			}
		})
	}
	held := fmt.Sprintf(`lease_held{job=%q,namespace=%q,lease=%q,kind="ConfigMap"}`, exporterJobName, ns, lock)
	waitProm(t, 2*time.Minute, held, eq(1))

	mark := env.receiver.mark()
	for _, e := range electors {
		e.Stop() // SIGTERM: the Python client has no release, the lock just stops being renewed
	}
	stopped := time.Now()
	want := map[string]string{"alertname": "LeaseNoLeader", "namespace": ns, "lease": lock,
		"job": exporterJobName, "class": "leader-election", "kind": "ConfigMap", "severity": "critical"}
	a, at := env.receiver.wait(t, mark, match{"firing", want}, 2*time.Minute)
	if !maps.Equal(a.Labels, want) {
		t.Errorf("labels = %v, want exactly %v", a.Labels, want)
	}
	if d := at.Sub(stopped); d < noLeaderFor {
		t.Errorf("paged %s after both electors stopped, sooner than the %s grace period", d.Round(time.Second), noLeaderFor)
	}
	t.Logf("LeaseNoLeader for the ConfigMap lock paged %s after both electors stopped", at.Sub(stopped).Round(time.Second))
}
