// Command elector is a client-go leader-election participant for Pods on the test node: it
// holds a coordination.k8s.io Lease with in-cluster config, named as client-go names holders
// (<hostname>_<uuid>), until it is stopped. Scaling its Deployment to 0 leaves the Lease
// unrenewed, which is what LeaseNoLeader must catch.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func main() {
	namespace := flag.String("namespace", os.Getenv("POD_NAMESPACE"), "namespace of the Lease")
	name := flag.String("lease", "node-elector", "name of the Lease")
	flag.Parse()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		log.Fatalf("in-cluster config: %v", err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	host, _ := os.Hostname()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: *namespace, Name: *name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: host + "_" + uuid.NewString()},
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second,
		RetryPeriod:   2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { log.Printf("leading %s/%s", *namespace, *name); <-ctx.Done() },
			OnStoppedLeading: func() { log.Printf("stopped leading") },
		},
	})
}
