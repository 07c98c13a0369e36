// Command participant is a client-go leader-election participant in a process of its own, so
// that a test can pause it (SIGSTOP) past its lease and resume it (SIGCONT), as a GC stall or
// a frozen VM would. It elects as kube-scheduler and controller-runtime do: holder identity
// <pod>_<uuid>, and leader_election_master_status{name} exported through client-go's
// leaderelection.SetProvider hook (component-base's provider, re-created here without its
// dependencies), served on a loopback /metrics.
//
// It prints "listening ADDR" once serving, then "leading UNIXNANO" and "stopped UNIXNANO" as
// client-go calls back. Unlike kube-scheduler it does not exit when it loses the Lease: it
// stands again as a candidate, so a test can keep scraping it. SIGTERM releases the Lease.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

type options struct {
	kubeconfig, namespace, lease, pod, listen string
	leaseDuration, renewDeadline, retryPeriod time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the API server")
	flag.StringVar(&o.namespace, "namespace", "", "namespace of the Lease it elects on")
	flag.StringVar(&o.lease, "lease", "", "name of the Lease; also the metric's name label")
	flag.StringVar(&o.pod, "pod", "", "the hostname part of the identity, as a Pod's name")
	flag.StringVar(&o.listen, "listen", "127.0.0.1:0", "address of /metrics")
	flag.DurationVar(&o.leaseDuration, "lease-duration", 4*time.Second, "LeaseDuration")
	flag.DurationVar(&o.renewDeadline, "renew-deadline", 3*time.Second, "RenewDeadline")
	flag.DurationVar(&o.retryPeriod, "retry-period", 500*time.Millisecond, "RetryPeriod")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	if o.kubeconfig == "" || o.namespace == "" || o.lease == "" || o.pod == "" {
		return fmt.Errorf("--kubeconfig, --namespace, --lease and --pod are required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	leaderelection.SetProvider(newProvider(reg))
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Printf("listening %s\n", ln.Addr())

	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.namespace, Name: o.lease},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: o.pod + "_" + uuid.NewString()},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, Name: o.lease, ReleaseOnCancel: true,
			LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { fmt.Printf("leading %d\n", time.Now().UnixNano()) },
				OnStoppedLeading: func() { fmt.Printf("stopped %d\n", time.Now().UnixNano()) },
			},
		})
		if err != nil {
			return err
		}
		le.Run(ctx)
	}
	return nil
}
