package informer

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Options.Failed hears a refused list as the API server answered it, with the scope's
// resource and namespace, so a one-shot reader can stop with the fix.
func TestFailedIsToldOfARefusedListWithItsScope(t *testing.T) {
	client := fake.NewClientset()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", nil)
	client.PrependReactor("list", "leases", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	type failure struct {
		resource, namespace string
		listed              bool
		err                 error
	}
	failed := make(chan failure, 1)
	l, err := NewForClients(Clients{List: client, Watch: client}, Options{Namespaces: []string{"apps"}, NoCandidates: true,
		Failed: func(resource, namespace string, listed bool, err error) {
			select { // never block the reflector that retries
			case failed <- failure{resource, namespace, listed, err}:
			default:
			}
		}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); l.Shutdown() }()
	l.Start(ctx)
	select {
	case f := <-failed:
		if f.resource != "leases.coordination.k8s.io" || f.namespace != "apps" || f.listed || !apierrors.IsForbidden(f.err) {
			t.Errorf("Failed told %s in %q (listed %v): %v; want the forbidden initial list of leases.coordination.k8s.io in apps", f.resource, f.namespace, f.listed, f.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Failed never told of the refused list")
	}
}
