// Package promoperator scrapes as kube-prometheus-stack does, on a test control plane: it
// installs the Prometheus Operator's CRDs, runs the operator as a host process, creates the
// Prometheus object kube-prometheus-stack creates by default, and runs Prometheus as a host
// process from exactly the configuration and rule files the operator generates for it,
// rewritten only where a host process differs from the Pod (Rewrite). It keeps them in step
// as the Pod's config-reloader does. hack/prometheus-operator/build.sh builds both from the
// module proxy: the operator, and the Prometheus release it deploys by default (Debian's
// Prometheus has no Kubernetes service discovery).
//
// Prometheus does not run as the operator's StatefulSet because no Prometheus or
// config-reloader image can be pulled here; building them is possible, but the scrape
// configuration, which is what the tests are about, is the same either way.
package promoperator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
)

// Options configure Start. The zero value is kube-prometheus-stack's defaults for a release
// named kube-prometheus-stack in namespace monitoring, as docs/deploy.md assumes.
type Options struct {
	// Release is kube-prometheus-stack's release name: the Prometheus selects ServiceMonitors,
	// PodMonitors, Probes and PrometheusRules labelled release=<Release>.
	Release string
	// Namespace holds the Prometheus object; created if missing.
	Namespace string
	// AlertmanagerURL receives the alerts (a host Alertmanager, e.g. promstack's); empty: the
	// Prometheus has no Alertmanager, as kube-prometheus-stack with alertmanager.enabled=false.
	AlertmanagerURL string
	// EvaluationInterval is the Prometheus object's spec.evaluationInterval; empty leaves the
	// operator's default (30s), as kube-prometheus-stack does.
	EvaluationInterval string
	// OperatorDir is a hack/prometheus-operator/build.sh output; empty runs the script.
	OperatorDir string
	// Dir receives the configuration, rule files, data and logs; empty: a temporary
	// directory that Stop removes.
	Dir string
}

// Stack is a running operator and the Prometheus it configures.
type Stack struct {
	opts       Options
	dir, opDir string
	ownDir     bool
	version    string // of the operator, e.g. v0.85.0
	promVer    string // of the Prometheus run, the Prometheus object's spec.version
	kc         kubernetes.Interface
	host       Host
	operator   *promstack.Process
	prometheus *promstack.Process

	stop, loopDone chan struct{}

	mu      sync.Mutex
	last    generated // what the operator wrote, as last applied
	running []byte    // the rewritten configuration Prometheus runs
	syncErr error     // the last sync's, nil when in step
}

// Start brings the stack up on cp and returns once Prometheus runs the operator's first
// configuration for the Prometheus object.
func Start(ctx context.Context, cp *controlplane.ControlPlane, o Options) (_ *Stack, err error) {
	if o.Release == "" {
		o.Release = "kube-prometheus-stack"
	}
	if o.Namespace == "" {
		o.Namespace = "monitoring"
	}
	s := &Stack{opts: o, dir: o.Dir, stop: make(chan struct{}), loopDone: make(chan struct{})}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "lease-exporter-promoperator-"); err != nil {
			return nil, err
		}
		s.ownDir = true
	}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if s.opDir, err = operatorDir(ctx, o.OperatorDir); err != nil {
		return nil, err
	}
	if s.version, err = operatorVersion(s.opDir); err != nil {
		return nil, err
	}
	if s.promVer, err = prometheusVersion(s.prometheusBin()); err != nil {
		return nil, err
	}
	if s.kc, err = kubernetes.NewForConfig(cp.Config()); err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cp.Config())
	if err != nil {
		return nil, err
	}
	if err := installCRDs(ctx, dyn, s.opDir); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}
	if _, err := s.kc.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	token, err := prometheusToken(ctx, s.kc, o)
	if err != nil {
		return nil, err
	}
	s.host = Host{
		RulesDir:        filepath.Join(s.dir, "rules"),
		AlertmanagerURL: o.AlertmanagerURL,
		// The StatefulSet's first Pod, shard 0: what the config-reloader would fill in.
		PodEnv: map[string]string{"POD_NAME": "prometheus-" + s.Name() + "-0", "SHARD": "0"},
	}
	if s.host.Kubeconfig, err = cp.KubeconfigForToken(token); err != nil {
		return nil, err
	}
	if s.operator, err = startOperator(ctx, s.opDir, s.dir, cp.KubeconfigPath()); err != nil {
		return nil, err
	}
	if err := createPrometheus(ctx, dyn, o, s.promVer); err != nil {
		return nil, err
	}
	if err := s.firstSync(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	if s.prometheus, err = promstack.StartPrometheusConfig(ctx, s.prometheusBin(), s.dir, s.configPath()); err != nil {
		return nil, err
	}
	go s.syncLoop(s.stop)
	return s, nil
}

// firstSync waits for the operator's first configuration and writes it for Prometheus.
func (s *Stack) firstSync(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := s.sync(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the operator wrote no usable configuration for Prometheus %s/%s within %s: %w",
				s.opts.Namespace, s.Name(), timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Name is the Prometheus object's name (kube-prometheus-stack's: <release>-prometheus).
func (s *Stack) Name() string { return s.opts.Release + "-prometheus" }

// OperatorVersion is the operator's release, e.g. "v0.85.0".
func (s *Stack) OperatorVersion() string { return s.version }

// OperatorDir holds the operator build: bin/, crds/ (see CRDFile), VERSION.
func (s *Stack) OperatorDir() string { return s.opDir }

// PrometheusVersion is the running Prometheus's version, which the Prometheus object declares.
func (s *Stack) PrometheusVersion() string { return s.promVer }

// PrometheusURL is the Prometheus HTTP API's base URL, on loopback.
func (s *Stack) PrometheusURL() string { return s.prometheus.URL }

// GeneratedConfig is the configuration the operator wrote, as last applied.
func (s *Stack) GeneratedConfig() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.config
}

// PodConfig is the generated configuration as the operator's Pod would read it: with the
// config-reloader's substitutions (expandPodEnv) and nothing else changed.
func (s *Stack) PodConfig() ([]byte, error) {
	return expandPodEnv(s.GeneratedConfig(), s.host.PodEnv)
}

// RunConfig is that configuration as rewritten for the host (Rewrite).
func (s *Stack) RunConfig() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// SyncError is the last failure to apply what the operator wrote, or nil.
func (s *Stack) SyncError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncErr
}

// Logs are the operator's and Prometheus's logs, for a failing test.
func (s *Stack) Logs() map[string]string {
	out := map[string]string{}
	for _, p := range []*promstack.Process{s.operator, s.prometheus} {
		if p != nil {
			out[p.Name] = p.Logs()
		}
	}
	return out
}

func (s *Stack) prometheusBin() string { return filepath.Join(s.opDir, "bin", "prometheus") }

func (s *Stack) configPath() string { return filepath.Join(s.dir, "prometheus.yaml") }

// Stop ends the sync loop, Prometheus and the operator, and removes a temporary Dir. The
// objects it created in the cluster stay; they go with the control plane.
func (s *Stack) Stop() error {
	select {
	case <-s.stop:
		return nil
	default:
	}
	close(s.stop)
	if s.prometheus != nil {
		<-s.loopDone
		s.prometheus.Stop()
	}
	if s.operator != nil {
		s.operator.Stop()
	}
	if s.ownDir {
		return os.RemoveAll(s.dir)
	}
	return nil
}
