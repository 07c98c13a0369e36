package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

// trial is one fault being run in its own namespace: it starts the electors, marks when the
// fault and the repair happened, and undoes everything it started.
type trial struct {
	e      *environment
	ns     string
	f      *Fault
	logger *slog.Logger
	// started is when the trial began: a page before its fault is a false one too.
	started time.Time

	mu      sync.Mutex
	undo    []func()
	windows windows
}

// windows are how long a trial holds its fault and watches afterwards.
type windows struct {
	settle  time.Duration // after the precondition, so every set has series to judge
	hold    time.Duration // from the fault to the repair on a must-page row
	resolve time.Duration // from the repair to the end
	quiet   time.Duration // from the fault to the end on a must-not-page row
}

// errNotRun marks a failed precondition: the row is reported as not run.
type errNotRun struct{ err error }

func (e errNotRun) Error() string { return e.err.Error() }

func notRun(format string, args ...any) error { return errNotRun{fmt.Errorf(format, args...)} }

func (t *trial) cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.undo = append(t.undo, f)
}

// close undoes what the trial started, newest first, and deletes its locks. The run closes
// every trial at its end, so that the exclusive faults meet the other rows' electors still
// running, as an outage meets a cluster's.
func (t *trial) close() {
	t.mu.Lock()
	undo := t.undo
	t.undo = nil
	t.mu.Unlock()
	for i := len(undo) - 1; i >= 0; i-- {
		undo[i]()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := t.e.suite.Client
	_ = c.CoordinationV1().Leases(t.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_ = c.CoreV1().ConfigMaps(t.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
	_ = c.CoordinationV1beta1().LeaseCandidates(t.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// namespace creates the trial's namespace; one left by an earlier run is reused.
func (t *trial) namespace(ctx context.Context) error {
	_, err := t.e.suite.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (t *trial) fault() { t.f.FaultAt = time.Now() }

func (t *trial) repair() {
	now := time.Now()
	t.f.RepairAt = &now
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// participant starts a client-go participant process for lease, scraped as Pod pod.
func (t *trial) participant(ctx context.Context, lease, pod string, tm election.Timings) (*election.Participant, error) {
	p, err := election.StartParticipant(ctx, t.e.participant, t.e.suite.CP.KubeconfigPath(), t.ns, lease, pod, tm)
	if err != nil {
		return nil, err
	}
	if err := t.e.targets.Set(p.Addr, podLabels(t.ns, pod)); err != nil {
		p.Kill()
		return nil, err
	}
	t.cleanup(func() { p.Stop(); _ = t.e.targets.Set(p.Addr, nil) })
	return p, nil
}

// stop ends a participant gracefully (it releases) and takes its Pod out of discovery, as
// a Deployment scaling it away does; kill crashes it the same way.
func (t *trial) stop(p *election.Participant) {
	p.Stop()
	_ = t.e.targets.Set(p.Addr, nil)
}

func (t *trial) kill(p *election.Participant) {
	p.Kill()
	_ = t.e.targets.Set(p.Addr, nil)
}

// manager starts a controller-runtime manager for lease, supervised: it exits when it loses
// its Lease, and comes back as a Pod's container would. It is scraped as the Pod named after
// this host: controller-runtime's identity is <hostname>_<uuid>, and in a cluster a Pod's
// hostname is its name, which the split-brain rules match holders to.
func (t *trial) manager(ctx context.Context, lease string) (*supervised, error) {
	pod, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	return t.supervised(ctx, lease+" controller-runtime manager", func() (process, error) {
		m, err := election.StartManager(ctx, t.e.manager, t.e.suite.CP.KubeconfigPath(), t.ns, lease, election.Components)
		if err != nil {
			return process{}, err
		}
		if err := t.e.targets.Set(m.Addr(), podLabels(t.ns, pod)); err != nil {
			m.Kill()
			return process{}, err
		}
		go func() { <-m.Done(); _ = t.e.targets.Set(m.Addr(), nil) }()
		return process{done: m.Done(), kill: m.Kill, stop: m.Stop}, nil
	})
}

// python starts the Python client's elector on lock, with its clock shifted by faketime
// ("" for none), supervised: it returns when it loses the lock, and comes back as a Pod's
// container would.
func (t *trial) python(ctx context.Context, lock election.PythonLock, name, identity, faketime string) (*supervised, error) {
	return t.supervised(ctx, name+" Python elector", func() (process, error) {
		p, err := election.StartPython(election.PythonOptions{Kubeconfig: t.e.suite.CP.KubeconfigPath(), Namespace: t.ns,
			Name: name, Identity: identity, Lock: lock, Faketime: faketime, Dir: t.e.dir})
		if err != nil {
			return process{}, err
		}
		return process{done: p.Done(), kill: p.Kill, stop: p.Stop}, nil
	})
}

// component starts a control-plane component electing in the trial's namespace, supervised:
// kube-scheduler and kube-controller-manager exit when they lose their lock, and come back
// as the kubelet restarts a static Pod.
func (t *trial) component(ctx context.Context, name string) (*supervised, error) {
	return t.supervised(ctx, name, func() (process, error) {
		p, err := t.e.suite.CP.StartComponent(ctx, name, "--leader-elect-resource-namespace="+t.ns, "--leader-elect-resource-name="+name)
		if err != nil {
			return process{}, err
		}
		return process{done: p.Done(), kill: func() { _ = p.Kill() }, stop: func() { _ = p.Stop() }}, nil
	})
}

// supervised runs start under a supervisor (supervise.go) until the trial closes; what,
// prefixed with the namespace, names it in the log.
func (t *trial) supervised(ctx context.Context, what string, start func() (process, error)) (*supervised, error) {
	s, err := supervise(ctx, t.logger, t.ns+"/"+what, start)
	if err != nil {
		return nil, err
	}
	t.cleanup(s.Stop)
	return s, nil
}

// holder waits until the Lease (or, for a ConfigMap lock, its leader annotation) names a
// holder that ok accepts, and returns it; not within timeout is a failed precondition.
func (t *trial) holder(ctx context.Context, kind election.LockKind, name string, timeout time.Duration, ok func(string) bool) (string, error) {
	end := time.Now().Add(timeout)
	last := "<no lock>"
	for {
		h, err := t.readHolder(ctx, kind, name)
		if err == nil {
			last = fmt.Sprintf("%q", h)
			if ok(h) {
				return h, nil
			}
		}
		if time.Now().After(end) {
			return "", notRun("%s %s/%s: no expected holder within %s (last seen %s)", kindName(kind), t.ns, name, timeout, last)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return "", err
		}
	}
}

// leads waits until the lock has a holder, then long enough for every set to see it held.
func (t *trial) leads(ctx context.Context, kind election.LockKind, name string) error {
	if _, err := t.holder(ctx, kind, name, lead, anyHolder); err != nil {
		return err
	}
	return sleep(ctx, t.windows.settle)
}

func (t *trial) readHolder(ctx context.Context, kind election.LockKind, name string) (string, error) {
	if kind == election.LockConfigMap {
		cm, err := t.e.suite.Client.CoreV1().ConfigMaps(t.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		// Only the holder: the Python client writes times client-go's record cannot parse.
		var rec struct {
			HolderIdentity string `json:"holderIdentity"`
		}
		if a, ok := cm.Annotations[resourcelock.LeaderElectionRecordAnnotationKey]; ok {
			err = json.Unmarshal([]byte(a), &rec)
		}
		return rec.HolderIdentity, err
	}
	l, err := t.e.suite.Client.CoordinationV1().Leases(t.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return ptr.Deref(l.Spec.HolderIdentity, ""), nil
}

// podLabels are the target labels of an elector scraped as Pod pod of namespace.
func podLabels(namespace, pod string) map[string]string {
	return map[string]string{"namespace": namespace, "pod": pod}
}

func kindName(k election.LockKind) string { return string(cmp.Or(k, election.LockLease)) }

func anyHolder(h string) bool { return h != "" }
