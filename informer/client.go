package informer

import (
	"fmt"
	"os"
	"strings"

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
	Protobuf(cfg)
	cfg.UserAgent = o.UserAgent
	return cfg, source, nil
}

// Protobuf makes cfg's clients read in protobuf, as the informer's sources expect: several
// times cheaper to decode than JSON, and Leases have always supported it. kubectl lease's
// configuration comes from kubectl's flags, and goes through here too.
func Protobuf(cfg *rest.Config) {
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
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
