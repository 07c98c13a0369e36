package informer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ClientOptions say how to reach the API server.
type ClientOptions struct {
	// Kubeconfig is an explicit kubeconfig file; empty means client-go's standard loading
	// rules ($KUBECONFIG, then ~/.kube/config), or the in-cluster config inside a pod.
	Kubeconfig string
	// Context overrides the kubeconfig's current context.
	Context string
	// UserAgent identifies the exporter in API server audit logs.
	UserAgent string
}

// RESTConfig loads the client configuration. Errors name the sources that were tried.
func RESTConfig(o ClientOptions) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := loader.ClientConfig()
	source := configSource(rules, o)
	if err != nil {
		return nil, source, fmt.Errorf("load Kubernetes client config from %s: %w", source, err)
	}
	if o.Kubeconfig == "" && !anyExists(rules.Precedence) {
		source = "in-cluster service account"
	}
	// Protobuf is several times cheaper to decode than JSON; Leases have always supported it.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cfg.UserAgent = o.UserAgent
	return cfg, source, nil
}

func configSource(rules *clientcmd.ClientConfigLoadingRules, o ClientOptions) string {
	s := "kubeconfig " + strings.Join(rules.Precedence, ":")
	if o.Kubeconfig != "" {
		s = "kubeconfig " + o.Kubeconfig
	}
	if o.Context != "" {
		s += " (context " + o.Context + ")"
	}
	return s
}

func anyExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// CheckReachable asks the API server for its version, so an unreachable or misconfigured
// cluster is a clear error at start instead of an exporter that never becomes ready.
func (l *Cache) CheckReachable(ctx context.Context, timeout time.Duration) error {
	err := retry(ctx, timeout, func(ctx context.Context) error {
		_, err := l.clients.List.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return nil // any HTTP answer proves the server is there; RBAC is judged later
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("API server %s not reachable within %s: %w", l.host, timeout, err)
	}
	return nil
}

// retry is the start-up retry loop: it calls attempt once a second until attempt succeeds
// or timeout passes, and then returns the last attempt's error. At start a blip must not stop
// the exporter, but an API server that stays silent must (exit code 4).
func retry(ctx context.Context, timeout time.Duration, attempt func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}
