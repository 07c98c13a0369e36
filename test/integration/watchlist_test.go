package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// The exporter's initial sync must be a streaming list (WatchList), as against every real
// cluster from 1.34 on: the API server's audit log shows the exporter's watch with
// sendInitialEvents=true answered 200 and no LIST of Leases, and a Lease written before the
// exporter started is exported from those initial events.
func TestInitialSyncIsStreamingList(t *testing.T) {
	ns := newNamespace(t, "watchlist")
	createHeldLease(t, env.Client, ns, "streamed")
	user := "exporter-" + ns
	exp := startExporterAs(t, env.CP, user)
	newProbe(exp, ns, "streamed").until(t, deadline, poll, "the exporter shows the Lease", func(m leaseMetrics) error {
		return wantHeld(m, "alpha", 0)
	})
	wantStreamedOnly(t, env.CP, user, "the exporter")
	wantQuietLog(t, exp)
}

// wantStreamedOnly waits for the audit log to show a streaming list of Leases answered 200 for
// user, who (the exporter, kubectl lease) never LISTed them.
func wantStreamedOnly(t *testing.T, cp *controlplane.ControlPlane, user, who string) {
	t.Helper()
	wantLeaseReads(t, cp, user, func(r leaseReads) error {
		switch {
		case r.lists > 0:
			return brokenf("%s LISTed Leases %d times (%s): the streaming list is not in use", who, r.lists, r)
		case r.streams == 0:
			return fmt.Errorf("no streaming list answered 200 yet (%s)", r)
		}
		return nil
	})
}

// An API server that does not serve streaming lists (WatchList off, the default of 1.33, or
// switched off by a cluster's admin) must leave the exporter working through client-go's
// fallback to LIST and WATCH, with nothing worse than debug output. The same API server runs
// coordinated leader election (off by default up to 1.36), so Leases keep spec.strategy and
// spec.preferredHolder, which the exporter must then export.
func TestNonDefaultAPIServer(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{
		AuditPolicy: controlplane.AuditLeaseReads,
		APIServerArgs: []string{
			"--feature-gates=WatchList=false,CoordinatedLeaderElection=true",
			"--runtime-config=coordination.k8s.io/v1beta1=true",
		},
	})
	client := kubernetes.NewForConfigOrDie(cp.Config())
	ns := "fallback"
	if _, err := client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createHeldLease(t, client, ns, "listed")
	const user = "exporter-fallback"
	exp := startExporterAs(t, cp, user)

	t.Run("streaming list refused: LIST and WATCH", func(t *testing.T) {
		newProbe(exp, ns, "listed").until(t, deadline, poll, "the exporter shows the Lease", func(m leaseMetrics) error {
			return wantHeld(m, "alpha", 0)
		})
		wantLeaseReads(t, cp, user, func(r leaseReads) error {
			switch {
			case r.streams > 0:
				return brokenf("a streaming list was answered 200 although WatchList is off (%s)", r)
			case r.refused == 0 || r.lists == 0 || r.watches == 0:
				return fmt.Errorf("want a refused streaming list, then a LIST and a WATCH (%s)", r)
			}
			return nil
		})
		wantQuietLog(t, exp)
	})
	t.Run("coordinated leader election fields exported", func(t *testing.T) {
		testStrategyFields(t, client, exp, ns, true)
	})
	t.Run("kubectl lease pages instead", func(t *testing.T) { kubectlLeasePagesWithoutStreaming(t, cp, ns, "listed") })
}

// On a default API server (coordinated leader election off in every version tested) the
// server drops spec.strategy and spec.preferredHolder; the exporter exports them empty and
// logs nothing about it.
func TestCoordinatedLeaderElectionFieldsAbsent(t *testing.T) {
	testStrategyFields(t, env.Client, startExporterAs(t, env.CP, "exporter-strategy"), newNamespace(t, "strategy"), false)
}

// testStrategyFields writes a Lease with spec.strategy and spec.preferredHolder and checks
// that exp exports exactly what the API server kept of them (kept says whether it should).
func testStrategyFields(t *testing.T, client kubernetes.Interface, exp *exporterproc.Exporter, ns string, kept bool) {
	now := metav1.NowMicro()
	lease, err := client.CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "coordinated"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("alpha"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0),
			Strategy:        ptr.To(coordinationv1.OldestEmulationVersion),
			PreferredHolder: ptr.To("beta"),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create lease: %v", err)
	}
	strategy, preferred := string(ptr.Deref(lease.Spec.Strategy, "")), ptr.Deref(lease.Spec.PreferredHolder, "")
	if got := strategy != "" && preferred != ""; got != kept {
		t.Fatalf("API server kept strategy %q, preferredHolder %q; want them kept: %v (is CoordinatedLeaderElection as expected?)", strategy, preferred, kept)
	}
	p := newProbe(exp, ns, "coordinated")
	p.until(t, deadline, poll, "the exporter shows strategy and preferred holder as the API server has them", func(m leaseMetrics) error {
		if err := wantHeld(m, "alpha", 0); err != nil {
			return err
		}
		info := p.last.Series("lease_info", map[string]string{"namespace": ns, "lease": "coordinated"})[0].Labels
		if info["strategy"] != strategy || info["preferred_holder"] != preferred {
			return brokenf("lease_info strategy %q, preferred_holder %q; API server: %q, %q", info["strategy"], info["preferred_holder"], strategy, preferred)
		}
		return nil
	})
	wantQuietLog(t, exp)
}

// createHeldLease writes a Lease held by "alpha" for an hour, so it reads as held without
// anyone renewing it.
func createHeldLease(t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	now := metav1.NowMicro()
	_, err := client.CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("alpha"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create lease %s/%s: %v", ns, name, err)
	}
}

// startExporterAs runs an exporter for this test that authenticates to cp as user (with every
// right), so the API server's audit log tells its requests apart, and logs JSON for
// wantQuietLog.
func startExporterAs(t *testing.T, cp *controlplane.ControlPlane, user string) *exporterproc.Exporter {
	t.Helper()
	kubeconfig, err := cp.KubeconfigForUser(user, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	// StartReady passes the shared control plane's admin kubeconfig first; the
	// exporter's flags take the last value given.
	return env.StartReady(t, env.Bin, "--metrics.extended", "--kubeconfig="+kubeconfig, "--log.format=json")
}

// leaseReads counts how one user read Leases, from the API server's audit log.
type leaseReads struct {
	streams int // watches with sendInitialEvents=true answered 200: streaming lists
	refused int // the same, refused (the API server does not serve streaming lists)
	lists   int // LISTs
	watches int // plain watches
	uris    []string
}

func (r leaseReads) String() string {
	return fmt.Sprintf("%d streaming lists, %d refused, %d LISTs, %d watches: %s",
		r.streams, r.refused, r.lists, r.watches, strings.Join(r.uris, " "))
}

// wantLeaseReads polls the audit log until check accepts user's Lease reads. The log is
// written asynchronously, so a read may show up a moment after the exporter is ready.
func wantLeaseReads(t *testing.T, cp *controlplane.ControlPlane, user string, check func(leaseReads) error) {
	t.Helper()
	var err error
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(poll) {
		var events []controlplane.AuditEvent
		if events, err = cp.AuditEvents(); err != nil {
			continue
		}
		var r leaseReads
		for _, e := range events {
			if e.User.Username != user || e.Stage == "ResponseComplete" && e.Code() == 200 && e.Verb == "watch" {
				continue // a watch that started is counted at ResponseStarted
			}
			r.uris = append(r.uris, fmt.Sprintf("%s(%s %d)", e.RequestURI, e.Stage, e.Code()))
			switch streaming := e.Query().Get("sendInitialEvents") == "true"; {
			case e.Verb == "list":
				r.lists++
			case streaming && e.Code() == 200:
				r.streams++
			case streaming:
				r.refused++
			default:
				r.watches++
			}
		}
		if err = check(r); err == nil {
			return
		}
		if errors.As(err, new(broken)) {
			break
		}
	}
	t.Fatalf("Lease reads of %s in the API server's audit log: %v", user, err)
}

// wantQuietLog fails the test if the exporter (started with --log.format=json) logged a
// warning or an error: an API server without some feature must degrade silently.
func wantQuietLog(t *testing.T, exp *exporterproc.Exporter) {
	t.Helper()
	for _, line := range strings.Split(exp.Logs(), "\n") {
		var rec struct{ Level, Msg string }
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Level == "WARN" || rec.Level == "ERROR" {
			t.Errorf("exporter logged %s: %s", rec.Level, line)
		}
	}
}
