package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Component names accepted by StartComponent.
const (
	KubeScheduler         = "kube-scheduler"
	KubeControllerManager = "kube-controller-manager"
)

// StartComponent runs kube-scheduler or kube-controller-manager against this
// control plane with leader election on (default Lease kube-system/<name>,
// identity <hostname>_<uuid>) and returns once its /healthz answers.
//
// Each call starts a new, independent instance with its own secure port,
// so several can compete for the same Lease. extraArgs (--name=value)
// replace defaults of the same flag, e.g.
//
//	"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
//	"--leader-elect-retry-period=1s"
//
// Stop also stops every component; Process.Kill simulates a crash.
func (cp *ControlPlane) StartComponent(ctx context.Context, name string, extraArgs ...string) (*Process, error) {
	if name != KubeScheduler && name != KubeControllerManager {
		return nil, fmt.Errorf("unknown component %q: want %s or %s", name, KubeScheduler, KubeControllerManager)
	}
	binary := filepath.Join(cp.assets, name)
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("component binary missing (rebuild with hack/kube-binaries/build.sh): %w", err)
	}

	cp.mu.Lock()
	if cp.stopped {
		cp.mu.Unlock()
		return nil, errors.New("control plane is stopped")
	}
	cp.seq[name]++
	label := fmt.Sprintf("%s-%d", name, cp.seq[name])
	cp.mu.Unlock()

	// Each component authenticates as its real in-cluster identity, so the
	// bootstrap RBAC roles apply exactly as in a kubeadm cluster.
	kubeconfig, err := cp.KubeconfigForUser("system:" + name)
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(cp.dir, "components", label)
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s dir: %w", label, err)
	}

	for range portAttempts {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args := mergeArgs(cp.componentDefaults(name, kubeconfig, certDir, port), extraArgs)
		p, err := startProcess(label, binary, filepath.Join(cp.dir, "logs", label+".log"), port, args)
		if err != nil {
			return nil, err
		}
		// Registered before the wait so Stop reaches it whatever happens.
		cp.mu.Lock()
		cp.components = append(cp.components, p)
		cp.mu.Unlock()
		url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
		err = waitHealthy(ctx, p, insecureHTTPClient(), url, cp.opts.StartTimeout)
		if err == nil {
			return p, nil
		}
		if !portTaken(err) {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	return nil, fmt.Errorf("%s: no free port after %d attempts", label, portAttempts)
}

func (cp *ControlPlane) componentDefaults(name, kubeconfig, certDir string, port int) []string {
	args := []string{
		"--kubeconfig=" + kubeconfig,
		// Delegated authn/authz for the component's own HTTPS endpoint;
		// without them it logs warnings and cannot check callers.
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=true",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
	}
	if name == KubeControllerManager {
		args = append(args,
			// Same keys as kube-apiserver, so tokens it mints verify.
			"--service-account-private-key-file="+cp.pki.path("sa.key"),
			"--root-ca-file="+cp.pki.path("ca.crt"),
			"--use-service-account-credentials=true",
			// Only what tests plausibly need (default ServiceAccounts,
			// namespace deletion); the full set would only burn CPU.
			"--controllers=serviceaccount-token-controller,serviceaccount-controller,namespace-controller",
		)
	}
	return args
}
