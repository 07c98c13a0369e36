// Command crmanager is a controller-runtime manager with leader election on, set up as an
// operator's main.go sets one up (kubebuilder's scaffold: ctrl.GetConfigOrDie, zap logger,
// ctrl.SetupSignalHandler), for hack/detect and the election tests: what the exporter must
// detect is a real operator's Lease, renewed by controller-runtime's own elector with its
// own defaults, not a re-creation of it (../../internal/testenv/election/participant).
//
// It runs no controllers: one Runnable that needs leader election stands for them and prints
// "leading UNIXNANO" to stdout when the manager starts leading. Once the metrics endpoint
// answers it prints "listening ADDR". /metrics is controller-runtime's metrics server (plain
// HTTP) on controller-runtime's registry, where controller-runtime's pkg/metrics registers
// client-go's leader-election provider: leader_election_master_status{name=<lease>}.
//
// SIGTERM stops it (releasing the Lease only with --release-on-cancel, controller-runtime's
// default being not to). When it loses the Lease it exits 1, as controller-runtime does.
//
// --kubeconfig is controller-runtime's own flag (pkg/client/config registers it on the
// command line), so it is read exactly as an operator reads it.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	var (
		namespace, lease, metricsAddr             string
		leaseDuration, renewDeadline, retryPeriod time.Duration
		releaseOnCancel                           bool
	)
	// Defaults are controller-runtime's (pkg/manager: defaultLeaseDuration and the others).
	flag.StringVar(&namespace, "namespace", "", "LeaderElectionNamespace: namespace of the Lease")
	flag.StringVar(&lease, "lease", "", "LeaderElectionID: name of the Lease, and the metric's name label")
	flag.StringVar(&metricsAddr, "metrics-addr", "", "host:port of /metrics; the caller picks a free port, since controller-runtime never says which port :0 bound")
	flag.DurationVar(&leaseDuration, "lease-duration", 15*time.Second, "LeaseDuration")
	flag.DurationVar(&renewDeadline, "renew-deadline", 10*time.Second, "RenewDeadline")
	flag.DurationVar(&retryPeriod, "retry-period", 2*time.Second, "RetryPeriod")
	flag.BoolVar(&releaseOnCancel, "release-on-cancel", false, "LeaderElectionReleaseOnCancel: release the Lease on SIGTERM")
	zapOpts := zap.Options{Development: true}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("crmanager")

	if namespace == "" || lease == "" {
		log.Error(nil, "--namespace and --lease are required")
		os.Exit(2)
	}
	if _, port, err := net.SplitHostPort(metricsAddr); err != nil || port == "0" {
		log.Error(err, "--metrics-addr must be host:port with a port other than 0", "metrics-addr", metricsAddr)
		os.Exit(2)
	}

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		LeaderElection:                true,
		LeaderElectionNamespace:       namespace,
		LeaderElectionID:              lease,
		LeaderElectionReleaseOnCancel: releaseOnCancel,
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:        "0",
	})
	if err != nil {
		log.Error(err, "new manager")
		os.Exit(1)
	}
	if err := mgr.Add(leader{}); err != nil {
		log.Error(err, "add runnable")
		os.Exit(1)
	}
	if err := mgr.Add(announcer{url: "http://" + metricsAddr + "/metrics", addr: metricsAddr}); err != nil {
		log.Error(err, "add runnable")
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

// leader stands for an operator's controllers: the manager starts it only once it leads.
type leader struct{}

func (leader) NeedLeaderElection() bool { return true }

func (leader) Start(ctx context.Context) error {
	fmt.Println("leading " + strconv.FormatInt(time.Now().UnixNano(), 10))
	<-ctx.Done()
	return nil
}

// announcer prints "listening ADDR" once the metrics server answers. It needs no leader
// election, so it runs on a standby manager too; the manager starts it after its HTTP
// servers, but their Start only begins listening, hence the polling.
type announcer struct{ url, addr string }

func (announcer) NeedLeaderElection() bool { return false }

func (a announcer) Start(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Println("listening " + a.addr)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}
