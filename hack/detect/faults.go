package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// faultDef is one row of the matrix: its electors, what it does to them, and when.
type faultDef struct {
	id, title, elector string
	mustPage           bool
	// exclusive faults touch what every row shares (the API server, the exporter): they run
	// alone, after the others, and every new page during them is theirs.
	exclusive bool
	lease     time.Duration // the electors' lease duration; 0 when there is no lock
	run       func(ctx context.Context, t *trial) error
}

// components are the timings kube-scheduler, kube-controller-manager, controller-runtime
// and the Python client default to: lease 15 s, renew deadline 10 s, retry 2 s.
var components = election.Components

const lead = 90 * time.Second // how long an elector may take to lead before the row is not run

func catalogue() []faultDef {
	return []faultDef{
		{id: "kill-client-go", title: "The only client-go elector SIGKILLed", elector: "client-go", mustPage: true, lease: components.LeaseDuration,
			run: killOnly(func(ctx context.Context, t *trial, pod string) (func(), error) {
				p, err := t.participant(ctx, "worker", pod, components)
				if err != nil {
					return nil, err
				}
				return p.Kill, nil
			}, "", "worker")},
		{id: "kill-controller-runtime", title: "The only controller-runtime manager SIGKILLed", elector: "controller-runtime", mustPage: true, lease: components.LeaseDuration,
			run: killOnly(func(ctx context.Context, t *trial, _ string) (func(), error) {
				m, err := t.manager(ctx, "operator-lock")
				if err != nil {
					return nil, err
				}
				return m.Kill, nil
			}, "", "operator-lock")},
		{id: "kill-python-lease", title: "The only Python Lease elector SIGKILLed", elector: "python Lease", mustPage: true, lease: components.LeaseDuration,
			run: killOnly(func(ctx context.Context, t *trial, pod string) (func(), error) {
				p, err := t.python(ctx, election.PythonLease, "py-worker", pod, "")
				if err != nil {
					return nil, err
				}
				return p.Kill, nil
			}, "", "py-worker")},
		{id: "kill-python-configmap", title: "The only Python ConfigMapLock elector SIGKILLed", elector: "python ConfigMap", mustPage: true, lease: components.LeaseDuration,
			run: killOnly(func(ctx context.Context, t *trial, pod string) (func(), error) {
				p, err := t.python(ctx, election.PythonConfigMap, "py-cm-worker", pod, "")
				if err != nil {
					return nil, err
				}
				return p.Kill, nil
			}, election.LockConfigMap, "py-cm-worker")},
		{id: "all-killed-kube-scheduler", title: "Both kube-schedulers SIGKILLed", elector: "kube-scheduler", mustPage: true, lease: components.LeaseDuration,
			run: componentsGone(controlplane.KubeScheduler, true)},
		{id: "scaled-to-zero-kube-controller-manager", title: "Both kube-controller-managers stopped (SIGTERM)", elector: "kube-controller-manager", mustPage: true, lease: components.LeaseDuration,
			run: componentsGone(controlplane.KubeControllerManager, false)},
		{id: "scaled-to-zero-client-go", title: "Both client-go electors stopped, releasing (scaled to 0)", elector: "client-go", mustPage: true, lease: components.LeaseDuration,
			run: scaledToZero},
		{id: "stall-split-brain", title: "The client-go leader SIGSTOPped 60 s past its lease, then resumed", elector: "client-go", mustPage: true, lease: components.LeaseDuration,
			run: stall},
		{id: "flapping", title: "A new client-go leader every 30 s for 6 minutes", elector: "client-go", mustPage: true, lease: components.LeaseDuration,
			run: flapping},
		{id: "renew-storm", title: "A client-go leader renewing every 100 ms", elector: "client-go", mustPage: true, lease: components.LeaseDuration,
			run: renewStorm},
		{id: "expected-lock-deleted", title: "An expected Lease deleted and its elector stopped", elector: "client-go", mustPage: true, lease: components.LeaseDuration,
			run: lockDeleted},
		{id: "coordinated-preferred-gone", title: "A coordinated election's preferred holder and its candidate gone", elector: "coordinated (scripted writes)", mustPage: true, lease: components.LeaseDuration,
			run: coordinatedPreferredGone},
		{id: "clock-ahead", title: "The holder's clock 2 minutes ahead", elector: "python Lease (libfaketime)", mustPage: true, lease: components.LeaseDuration,
			run: skewed("+120s", true)},
		{id: "graceful-handover", title: "The client-go leader stopped, releasing; the standby takes over", elector: "client-go", lease: components.LeaseDuration,
			run: handover},
		{id: "rolling-restart", title: "Three client-go candidates restarted one at a time", elector: "client-go", lease: components.LeaseDuration,
			run: rollingRestart},
		{id: "clock-behind", title: "The holder's clock 2 minutes behind", elector: "python Lease (libfaketime)", lease: components.LeaseDuration,
			run: skewed("-120s", false)},
		{id: "node-heartbeat-stops", title: "A node's heartbeat Lease stops being renewed", elector: "kubelet (scripted writes)", lease: 40 * time.Second,
			run: nodeHeartbeat},
		{id: "exporter-restart-mid-failover", title: "The exporter's two replicas restarted one at a time during a client-go failover", elector: "client-go", exclusive: true, lease: components.LeaseDuration,
			run: exporterRestart},
		{id: "apiserver-down", title: "The API server down for 60 s", elector: "client-go", exclusive: true, lease: components.LeaseDuration,
			run: apiServerDown},
	}
}

// killOnly starts the only elector of a lock, SIGKILLs it once it leads (a crash the Pod
// does not come back from), holds, then starts a replacement as the repair.
func killOnly(start func(ctx context.Context, t *trial, pod string) (kill func(), err error), kind election.LockKind, name string) func(context.Context, *trial) error {
	return func(ctx context.Context, t *trial) error {
		kill, err := start(ctx, t, t.ns+"-0")
		if err != nil {
			return notRun("start the elector: %v", err)
		}
		if err := t.leads(ctx, kind, name); err != nil {
			return err
		}
		t.fault()
		kill()
		if err := sleep(ctx, t.windows.hold); err != nil {
			return err
		}
		if _, err := start(ctx, t, t.ns+"-1"); err != nil {
			return fmt.Errorf("start the replacement: %w", err)
		}
		t.repair()
		return sleep(ctx, t.windows.resolve)
	}
}

// componentsGone runs two instances of a control-plane component electing in the trial's
// namespace, then ends both: SIGKILL (a crash) or SIGTERM (scaled to 0).
func componentsGone(name string, kill bool) func(context.Context, *trial) error {
	return func(ctx context.Context, t *trial) error {
		var procs []*supervised
		for range 2 {
			p, err := t.component(ctx, name)
			if err != nil {
				return notRun("start %s: %v", name, err)
			}
			procs = append(procs, p)
		}
		if err := t.leads(ctx, "", name); err != nil {
			return err
		}
		t.fault()
		for _, p := range procs {
			p.end(kill)
		}
		if err := sleep(ctx, t.windows.hold); err != nil {
			return err
		}
		if _, err := t.component(ctx, name); err != nil {
			return fmt.Errorf("start a replacement %s: %w", name, err)
		}
		t.repair()
		return sleep(ctx, t.windows.resolve)
	}
}

// pair starts two client-go participants of lease with the components' timings, and
// returns the leader first once every set has had time to see it lead.
func pair(ctx context.Context, t *trial, lease string) (leader, standby *election.Participant, err error) {
	tm := components
	a, err := t.participant(ctx, lease, t.ns+"-a", tm)
	if err != nil {
		return nil, nil, notRun("start a participant: %v", err)
	}
	b, err := t.participant(ctx, lease, t.ns+"-b", tm)
	if err != nil {
		return nil, nil, notRun("start a participant: %v", err)
	}
	h, err := t.holder(ctx, "", lease, lead, anyHolder)
	if err != nil {
		return nil, nil, err
	}
	if strings.HasPrefix(h, b.Pod+"_") {
		a, b = b, a
	}
	return a, b, sleep(ctx, t.windows.settle)
}

func scaledToZero(ctx context.Context, t *trial) error {
	a, b, err := pair(ctx, t, "singleton")
	if err != nil {
		return err
	}
	t.fault()
	for _, p := range []*election.Participant{b, a} {
		t.stop(p)
	}
	if err := sleep(ctx, t.windows.hold); err != nil {
		return err
	}
	if _, err := t.participant(ctx, "singleton", t.ns+"-c", components); err != nil {
		return fmt.Errorf("scale back up: %w", err)
	}
	t.repair()
	return sleep(ctx, t.windows.resolve)
}

func stall(ctx context.Context, t *trial) error {
	leader, _, err := pair(ctx, t, "stalled")
	if err != nil {
		return err
	}
	t.fault()
	if err := leader.Pause(); err != nil {
		return err
	}
	if err := sleep(ctx, components.LeaseDuration+60*time.Second); err != nil {
		_ = leader.Resume()
		return err
	}
	if err := leader.Resume(); err != nil {
		return err
	}
	t.repair()
	return sleep(ctx, t.windows.resolve)
}

// flapping hands leadership over every 30 s: the leader is restarted (SIGTERM, releasing)
// and comes back as a standby, as a crash-looping leader does. The handovers keep to a
// schedule counted from the fault, so that the time a stop and a start take does not
// stretch the 30 s, and each stops whoever the Lease names: the restarted Pod's elector
// tries at once while the standby polls, so it often takes over, and a harness that assumed
// the standby had (as the run at 0224426 did) stopped a standby every other time, halving
// the changes.
func flapping(ctx context.Context, t *trial) error {
	const lease = "flappy"
	a, b, err := pair(ctx, t, lease)
	if err != nil {
		return err
	}
	t.fault()
	live := []*election.Participant{a, b}
	for i := range 12 {
		if err := sleep(ctx, time.Until(t.f.FaultAt.Add(time.Duration(i+1)*30*time.Second))); err != nil {
			return err
		}
		h, err := t.holder(ctx, "", lease, 30*time.Second, anyHolder)
		if err != nil {
			return fmt.Errorf("handover %d: %w", i+1, err)
		}
		at := slices.IndexFunc(live, func(p *election.Participant) bool { return strings.HasPrefix(h, p.Pod+"_") })
		if at < 0 {
			return fmt.Errorf("handover %d: the Lease names %q, none of the running participants", i+1, h)
		}
		t.stop(live[at])
		next, err := t.participant(ctx, lease, fmt.Sprintf("%s-%d", t.ns, i), components)
		if err != nil {
			return err
		}
		live = append(slices.Delete(live, at, at+1), next)
	}
	t.repair()
	// FrequentTransitions counts over 10 minutes: its resolution comes that long after.
	return sleep(ctx, t.windows.resolve+10*time.Minute)
}

func renewStorm(ctx context.Context, t *trial) error {
	stormy := election.Timings{LeaseDuration: components.LeaseDuration, RenewDeadline: components.RenewDeadline, RetryPeriod: 100 * time.Millisecond}
	p, err := t.participant(ctx, "stormy", t.ns+"-0", components)
	if err != nil {
		return notRun("start a participant: %v", err)
	}
	if err := t.leads(ctx, "", "stormy"); err != nil {
		return err
	}
	// The misconfigured release rolls out: the new Pod takes over with a 100 ms retry.
	t.fault()
	t.stop(p)
	storm, err := t.participant(ctx, "stormy", t.ns+"-1", stormy)
	if err != nil {
		return err
	}
	// LeaseRenewStorm needs its 5 minute window full and then 10 minutes of for.
	if err := sleep(ctx, 16*time.Minute); err != nil {
		return err
	}
	t.stop(storm)
	if _, err := t.participant(ctx, "stormy", t.ns+"-2", components); err != nil {
		return err
	}
	t.repair()
	return sleep(ctx, t.windows.resolve+3*time.Minute)
}

// expectedLease is the Lease lockDeleted removes; the exporter is started with it in
// --expect, as a user declares the locks that must exist.
const expectedLease = "billing"

func lockDeleted(ctx context.Context, t *trial) error {
	p, err := t.participant(ctx, expectedLease, t.ns+"-0", components)
	if err != nil {
		return notRun("start a participant: %v", err)
	}
	if err := t.leads(ctx, "", expectedLease); err != nil {
		return err
	}
	t.fault()
	t.stop(p)
	if err := t.e.suite.Client.CoordinationV1().Leases(t.ns).Delete(ctx, expectedLease, metav1.DeleteOptions{}); err != nil {
		return err
	}
	// LeaseMissing waits 5 minutes.
	if err := sleep(ctx, t.windows.hold+3*time.Minute); err != nil {
		return err
	}
	if _, err := t.participant(ctx, expectedLease, t.ns+"-1", components); err != nil {
		return err
	}
	t.repair()
	return sleep(ctx, t.windows.resolve)
}

// coordinatedPreferredGone writes what a coordinated election's holder and its
// LeaseCandidate write (the API server's CoordinatedLeaderElection gate is on), then stops
// both, as when the preferred holder's Pod is gone; its return is the repair.
func coordinatedPreferredGone(ctx context.Context, t *trial) error {
	const lease, holder = "scheduler", "sched-b"
	leases, candidates := t.e.suite.Client.CoordinationV1().Leases(t.ns), t.e.suite.Client.CoordinationV1beta1().LeaseCandidates(t.ns)
	now := metav1.NowMicro()
	if _, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: lease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(components.LeaseDuration.Seconds())),
			AcquireTime: &now, RenewTime: &now, Strategy: ptr.To(coordinationv1.OldestEmulationVersion), PreferredHolder: ptr.To(holder)},
	}, metav1.CreateOptions{}); err != nil {
		return notRun("create the coordinated Lease: %v", err)
	}
	if _, err := candidates.Create(ctx, &coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Name: holder},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: lease, RenewTime: &now, BinaryVersion: "1.36.0",
			EmulationVersion: "1.36.0", Strategy: coordinationv1.OldestEmulationVersion},
	}, metav1.CreateOptions{}); err != nil {
		return notRun("create the LeaseCandidate: %v", err)
	}
	var alive atomic.Bool
	alive.Store(true)
	rctx, cancel := context.WithCancel(ctx)
	t.cleanup(cancel)
	go func() {
		for rctx.Err() == nil {
			if alive.Load() {
				renew := metav1.NowMicro()
				if l, err := leases.Get(rctx, lease, metav1.GetOptions{}); err == nil {
					l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To(holder), &renew
					_, _ = leases.Update(rctx, l, metav1.UpdateOptions{})
				}
				if c, err := candidates.Get(rctx, holder, metav1.GetOptions{}); err == nil {
					c.Spec.RenewTime = &renew
					_, _ = candidates.Update(rctx, c, metav1.UpdateOptions{})
				}
			}
			_ = sleep(rctx, components.RetryPeriod)
		}
	}()
	if _, err := t.holder(ctx, "", lease, lead, func(h string) bool { return h == holder }); err != nil {
		return err
	}
	if err := sleep(ctx, t.windows.settle); err != nil {
		return err
	}
	t.fault()
	alive.Store(false)
	if err := candidates.Delete(ctx, holder, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := sleep(ctx, t.windows.hold); err != nil {
		return err
	}
	// The preferred holder's Pod is back: its candidate registers and it renews again.
	renew := metav1.NowMicro()
	if _, err := candidates.Create(ctx, &coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Name: holder},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: lease, RenewTime: &renew, BinaryVersion: "1.36.0",
			EmulationVersion: "1.36.0", Strategy: coordinationv1.OldestEmulationVersion},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	alive.Store(true)
	t.repair()
	return sleep(ctx, t.windows.resolve)
}

// skewed runs a Python Lease elector whose clock libfaketime shifts by offset. Ahead it
// must page (the skew alert); the row is not repaired, since a replacement would wait out
// the future renewTime. Behind it must not page.
func skewed(offset string, mustPage bool) func(context.Context, *trial) error {
	return func(ctx context.Context, t *trial) error {
		if err := sleep(ctx, t.windows.settle); err != nil {
			return err
		}
		t.fault()
		if _, err := t.python(ctx, election.PythonLease, "skewed", t.ns+"-0", offset); err != nil {
			return notRun("start the skewed elector: %v", err)
		}
		if _, err := t.holder(ctx, "", "skewed", lead, anyHolder); err != nil {
			return err
		}
		if mustPage {
			// LeaseHolderClockSkew waits 5 minutes.
			return sleep(ctx, t.windows.hold+3*time.Minute)
		}
		return sleep(ctx, t.windows.quiet)
	}
}

func handover(ctx context.Context, t *trial) error {
	leader, _, err := pair(ctx, t, "handover")
	if err != nil {
		return err
	}
	t.fault()
	t.stop(leader)
	if _, err := t.participant(ctx, "handover", t.ns+"-c", components); err != nil {
		return err
	}
	return sleep(ctx, t.windows.quiet)
}

func rollingRestart(ctx context.Context, t *trial) error {
	const lease = "rolling"
	var ps []*election.Participant
	for i := range 3 {
		p, err := t.participant(ctx, lease, fmt.Sprintf("%s-%d", t.ns, i), components)
		if err != nil {
			return notRun("start a participant: %v", err)
		}
		ps = append(ps, p)
	}
	if err := t.leads(ctx, "", lease); err != nil {
		return err
	}
	t.fault()
	for i, p := range ps {
		t.stop(p)
		if _, err := t.participant(ctx, lease, fmt.Sprintf("%s-%d", t.ns, i+3), components); err != nil {
			return err
		}
		// A Deployment's rollout waits for the new Pod to be ready; 20 s stands for it.
		if err := sleep(ctx, 20*time.Second); err != nil {
			return err
		}
	}
	return sleep(ctx, t.windows.quiet)
}

// nodeHeartbeat renews a Lease in kube-node-lease as a kubelet does (every 10 s, 40 s
// duration), then stops: a node problem, for the node's own alerts, not an election's.
func nodeHeartbeat(ctx context.Context, t *trial) error {
	leases := t.e.suite.Client.CoordinationV1().Leases(t.ns)
	name := "detect-node-1"
	t.cleanup(func() { _ = leases.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	renew := func() error {
		now := metav1.NowMicro()
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now}}, metav1.CreateOptions{})
			return err
		}
		l.Spec.RenewTime = &now
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	}
	end := time.Now().Add(t.windows.settle + 20*time.Second)
	for time.Now().Before(end) {
		if err := renew(); err != nil {
			return notRun("renew the node Lease: %v", err)
		}
		if err := sleep(ctx, 10*time.Second); err != nil {
			return err
		}
	}
	t.fault()
	return sleep(ctx, t.windows.quiet)
}

// exporterRestart SIGKILLs the client-go leader, and restarts the exporter's replicas one
// after the other (a rollout of the chart's two) while its standby waits out the lease.
func exporterRestart(ctx context.Context, t *trial) error {
	leader, _, err := pair(ctx, t, "failover")
	if err != nil {
		return err
	}
	t.fault()
	t.kill(leader)
	if err := sleep(ctx, 5*time.Second); err != nil {
		return err
	}
	for i, exp := range t.e.exporters {
		if err := exp.Stop(); err != nil {
			return fmt.Errorf("stop exporter replica %d: %w", i, err)
		}
		if err := t.e.startExporter(ctx, i); err != nil {
			return fmt.Errorf("restart exporter replica %d: %w", i, err)
		}
	}
	t.repair()
	return sleep(ctx, t.windows.quiet)
}

func apiServerDown(ctx context.Context, t *trial) error {
	if _, _, err := pair(ctx, t, "outage"); err != nil {
		return err
	}
	t.fault()
	if err := t.e.suite.CP.StopAPIServer(); err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	if err := sleep(ctx, 60*time.Second); err != nil {
		_ = t.e.suite.CP.StartAPIServer()
		return err
	}
	if err := t.e.suite.CP.StartAPIServer(); err != nil {
		return fmt.Errorf("start kube-apiserver: %w", err)
	}
	t.repair()
	return sleep(ctx, t.windows.quiet)
}
