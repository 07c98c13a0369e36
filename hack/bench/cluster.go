package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// Lease i of the benchmark: every tenth is a leader-election Lease in one of a few
// namespaces, the rest are kubelet node heartbeats, as in a large cluster where node Leases
// dominate. Leases are created cumulatively (N=1k, then 9k more for 10k, ...), so index i
// always names the same Lease and earlier sizes need not be recreated.
const nodeNamespace = "kube-node-lease"

var electionNamespaces = []string{"kube-system", "cert-manager", "ingress-nginx", "monitoring", "argocd", "team-payments", "team-search"}

// nodeLeaseSeconds is the bench's node Leases' duration. Kubelets renew every 10 s of 40; the
// bench cannot renew 90k Leases every 10 s (its churn renews random ones at ~1,000/s, each
// every ~100-230 s at 100k), so its node Leases last an hour: they read as a healthy
// cluster's do, on time, instead of nearly all overdue. Only the judgement depends on it (and
// with it the default's series for overdue node heartbeats), not the series of any other set.
const nodeLeaseSeconds = 3600

// probeLabel marks the ~110 Leases the lag probe exporter watches (--lease-selector).
const probeLabel = "bench-probe"

func isProbe(i int) bool { return i < 1000 && i%9 == 1 }

// slot is one Lease the benchmark owns: the latest object the API server returned, so a
// renewal is a plain Update with the current resourceVersion, exactly as the kubelet does.
type slot struct {
	mu  sync.Mutex
	obj *coordinationv1.Lease
}

type cluster struct {
	cp     *controlplane.ControlPlane
	client kubernetes.Interface
	slots  []*slot
}

// startCluster runs etcd and kube-apiserver in dir. The admin identity is in system:masters,
// which API priority and fairness exempts, so bulk creation and churn are never throttled
// by the server; the client's own rate limiter is switched off for the same reason.
func startCluster(ctx context.Context, dir string) (*cluster, error) {
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, APIServerArgs: []string{
		"--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
	}})
	if err != nil {
		return nil, err
	}
	cfg := cp.Config()
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	cfg.UserAgent = "lease-exporter-bench"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	for _, ns := range append([]string{nodeNamespace}, electionNamespaces...) {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, errors.Join(fmt.Errorf("create namespace %s: %w", ns, err), cp.Stop())
		}
	}
	return &cluster{cp: cp, client: client}, nil
}

func nodeName(i int) string {
	return fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)
}

// leaseFor builds Lease i and the field manager that writes it, so managedFields look like
// a real cluster's: "kubelet" for node Leases, the controller for leader elections.
func leaseFor(i int, now time.Time) (*coordinationv1.Lease, string) {
	renew := metav1.NewMicroTime(now.Truncate(time.Microsecond))
	var labels map[string]string
	if isProbe(i) {
		labels = map[string]string{probeLabel: "true"}
	}
	if i%10 != 0 {
		name := nodeName(i)
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: nodeNamespace, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: types.UID(uuid.NewString())}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](nodeLeaseSeconds), RenewTime: &renew},
		}, "kubelet"
	}
	k := i / 10
	ns := electionNamespaces[k%len(electionNamespaces)]
	name := fmt.Sprintf("controller-%05d", k)
	// Pod-style holder: deployment hash, pod suffix, and the client's random UUID.
	holder := fmt.Sprintf("%s-%08x-%05x_%s", name, rand.Uint32(), rand.Uint32()&0xfffff, uuid.NewString())
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &renew, RenewTime: &renew, LeaseTransitions: ptr.To[int32](3)},
	}, "controller-manager"
}

// grow creates Leases len(slots)..n-1 with many goroutines and returns the creation rate.
func (c *cluster) grow(ctx context.Context, n, workers int) (float64, error) {
	from := len(c.slots)
	if n <= from {
		return 0, nil
	}
	for range n - from {
		c.slots = append(c.slots, &slot{})
	}
	start := time.Now()
	var next atomic.Int64
	next.Store(int64(from))
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				obj, err := c.create(ctx, i)
				if err != nil {
					errc <- err
					return
				}
				c.slots[i].obj = obj
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return 0, err
	}
	return float64(n-from) / time.Since(start).Seconds(), nil
}

// create retries transient errors: on a loaded two-core box the API server can time out.
func (c *cluster) create(ctx context.Context, i int) (*coordinationv1.Lease, error) {
	l, manager := leaseFor(i, time.Now())
	leases := c.client.CoordinationV1().Leases(l.Namespace)
	var err error
	for attempt := range 5 {
		var out *coordinationv1.Lease
		out, err = leases.Create(ctx, l, metav1.CreateOptions{FieldManager: manager})
		if err == nil {
			return out, nil
		}
		if apierrors.IsAlreadyExists(err) {
			return leases.Get(ctx, l.Name, metav1.GetOptions{})
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return nil, fmt.Errorf("create lease %s/%s: %w", l.Namespace, l.Name, err)
}

// renew sets spec.renewTime of Lease i to now with an Update, as a kubelet heartbeat does,
// and returns the new renewTime in Unix microseconds. Slots serialise renewals of one Lease.
func (c *cluster) renew(ctx context.Context, i int) (*coordinationv1.Lease, error) {
	s := c.slots[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	manager := "kubelet"
	if i%10 == 0 {
		manager = "controller-manager"
	}
	leases := c.client.CoordinationV1().Leases(s.obj.Namespace)
	for range 3 {
		l := s.obj.DeepCopy()
		l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now().Truncate(time.Microsecond)))
		out, err := leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: manager})
		if err == nil {
			s.obj = out
			return out, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, err
		}
		if s.obj, err = leases.Get(ctx, l.Name, metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("renew lease %d: conflicts", i)
}
