package controlplane

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// testStreamingList checks that client-go's own informer syncs from this control plane with a
// streaming list (WatchList), as it does against a real cluster: the API server's audit log
// shows its watch with sendInitialEvents=true answered 200, and no LIST. With an etcd lacking
// RequestWatchProgress the API server refuses the stream and client-go falls back to a LIST.
func testStreamingList(ctx context.Context, t *testing.T, cp *ControlPlane) {
	const user = "streaming-list-probe"
	cfg, err := cp.ConfigForUser(user, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(cfg), 0)
	informer := factory.Coordination().V1().Leases().Informer()
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); factory.Shutdown() }()
	factory.StartWithContext(ctx)
	if !cache.WaitForNamedCacheSyncWithContext(ctx, informer.HasSynced) {
		t.Fatal("lease informer did not sync")
	}
	if len(informer.GetStore().List()) == 0 {
		t.Fatal("lease informer synced without the Lease created before it started")
	}
	waitFor(ctx, t, "the API server's audit log shows the informer's streaming list", func() error {
		events, err := cp.AuditEvents()
		if err != nil {
			return err
		}
		streamed := false
		for _, e := range events {
			if e.User.Username != user {
				continue
			}
			if e.Verb == "list" {
				t.Fatalf("the informer LISTed Leases (%s, %d): the streaming list is not in use", e.RequestURI, e.Code())
			}
			streamed = streamed || (e.Verb == "watch" && e.Query().Get("sendInitialEvents") == "true" && e.Code() == 200)
		}
		if !streamed {
			return fmt.Errorf("no watch with sendInitialEvents=true answered 200 among %d audit events", len(events))
		}
		return nil
	})
}
