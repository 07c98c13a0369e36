package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
)

func netListen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// scenarios are the demo's elections: a stable one, one that fails over every minute,
// one released gracefully every 90s, and node heartbeats with one node gone silent.
type scenarios struct {
	pools  []*election.Pool
	cancel context.CancelFunc
}

func (s *scenarios) stop() {
	s.cancel()
	for _, p := range s.pools {
		p.StopAll()
	}
}

func startScenarios(ctx context.Context, client kubernetes.Interface, logger *slog.Logger) (*scenarios, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &scenarios{cancel: cancel}
	for _, ns := range []string{"payments", "orders", "batch"} {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	slow := election.Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	for _, spec := range []struct {
		ns, name, prefix string
		n                int
		release          bool
		every            time.Duration
	}{
		{"payments", "payments-controller", "payments-controller-7d9f", 3, false, 0},
		{"orders", "orders-worker", "orders-worker-5c6b", 2, false, time.Minute},
		{"batch", "report-singleton", "report-singleton-84aa", 2, true, 90 * time.Second},
	} {
		pool, err := election.StartPool(ctx, client, spec.ns, spec.name, spec.prefix, spec.n, slow, spec.release)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.pools = append(s.pools, pool)
		if spec.every > 0 {
			go churn(ctx, client, pool, slow, spec.release, spec.every, logger)
		}
	}
	go heartbeats(ctx, client, []string{"node-a", "node-b", "node-c"}, "node-c", logger)
	return s, nil
}

// churn replaces the leader every period: abruptly (a crash, the Lease expires) or, with
// release, gracefully (the Lease is handed back at once).
func churn(ctx context.Context, client kubernetes.Interface, p *election.Pool, t election.Timings, release bool, every time.Duration, logger *slog.Logger) {
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		leader := p.Leader()
		if leader == nil {
			continue
		}
		how := "killing"
		if release {
			how = "gracefully stopping"
		}
		logger.Info("demo: "+how+" leader", "lease", p.Namespace+"/"+p.Name, "holder", leader.Identity)
		p.Remove(leader)
		c, err := election.Start(ctx, client, p.Namespace, p.Name, fmt.Sprintf("%s-r%d", leader.Identity, n), t, release)
		if err == nil {
			p.Add(c)
		}
	}
}

// heartbeats renews node Leases in kube-node-lease every 10s like kubelets do; silent stops
// renewing after a minute so the node-heartbeat dashboard has a stale node to show.
func heartbeats(ctx context.Context, client kubernetes.Interface, nodes []string, silent string, logger *slog.Logger) {
	leases := client.CoordinationV1().Leases("kube-node-lease")
	start := time.Now()
	for {
		for _, node := range nodes {
			if node == silent && time.Since(start) > time.Minute {
				continue
			}
			now := metav1.NewMicroTime(time.Now())
			l, err := leases.Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](40)}}
				l.Spec.RenewTime = &now
				if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
					logger.Warn("demo: create node lease", "node", node, "err", err)
				}
				continue
			}
			l.Spec.RenewTime = &now
			if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
				logger.Warn("demo: renew node lease", "node", node, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Second):
		}
	}
}
