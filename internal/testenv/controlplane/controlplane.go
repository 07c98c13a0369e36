// Package controlplane runs a real, local Kubernetes control plane (etcd,
// kube-apiserver and optionally kube-scheduler / kube-controller-manager)
// on loopback, for integration tests and for `make demo`.
//
// Binaries come from KUBEBUILDER_ASSETS, which hack/kube-binaries/build.sh
// fills (etcd and Kubernetes built from the Go module proxy). controller-runtime's envtest is not used: it cannot set Pdeathsig,
// so a killed test would leak etcd and kube-apiserver, and it cannot restart
// kube-apiserver on the same port with the same certificates.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Options configures Start. The zero value is ready to use.
type Options struct {
	// AssetsDir holds etcd, kube-apiserver, kube-scheduler and
	// kube-controller-manager. Defaults to $KUBEBUILDER_ASSETS.
	AssetsDir string
	// Dir receives data, certificates, kubeconfigs and logs. Defaults to a
	// fresh temporary directory that Stop removes; a given Dir is kept, but
	// its etcd data is wiped on Start.
	Dir string
	// KeepDir keeps a defaulted Dir after Stop, e.g. to read logs.
	KeepDir bool
	// APIServerArgs are extra kube-apiserver flags (--name=value); a flag
	// given here replaces the harness default of the same name.
	APIServerArgs []string
	// AuditPolicy, when set, is an audit policy (e.g. AuditLeaseReads) for kube-apiserver,
	// which then writes its audit log to AuditLogPath for AuditEvents to read.
	AuditPolicy string
	// StartTimeout bounds each wait for a process to become ready.
	// Defaults to 2 minutes: the machine may be busy compiling.
	StartTimeout time.Duration
}

// ControlPlane is a running etcd plus kube-apiserver. Its methods are safe
// to call from several goroutines, but restarts of one process should not
// overlap.
type ControlPlane struct {
	opts   Options
	assets string
	dir    string
	ownDir bool
	pki    *pki
	admin  credentials

	adminKubeconfig string
	etcdPort        int
	etcdPeerPort    int
	apiPort         int
	etcdArgs        []string
	apiArgs         []string
	etcdVersion     string

	mu         sync.Mutex
	etcd       *Process
	apiserver  *Process
	components []*Process
	seq        map[string]int
	stopped    bool
}

// Start brings up etcd and kube-apiserver and returns once /readyz answers.
// ctx bounds only the start-up; the processes live until Stop.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	assets, err := findAssets(opts.AssetsDir)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{opts: opts, assets: assets, dir: opts.Dir, seq: map[string]int{}}
	if cp.dir == "" {
		cp.dir, err = os.MkdirTemp("", "lease-exporter-controlplane-")
		if err != nil {
			return nil, fmt.Errorf("create control plane dir: %w", err)
		}
		cp.ownDir = !opts.KeepDir
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, cp.Stop())
		}
	}()
	// etcd data is always fresh, even in a caller-supplied Dir: old data
	// would carry the peer URLs of a previous run and objects signed by an
	// old CA.
	if err := os.RemoveAll(filepath.Join(cp.dir, "etcd")); err != nil {
		return nil, fmt.Errorf("clear old etcd data: %w", err)
	}
	for _, sub := range []string{"logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(cp.dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("create %s dir: %w", sub, err)
		}
	}
	if cp.pki, err = newPKI(filepath.Join(cp.dir, "pki")); err != nil {
		return nil, err
	}
	certData, keyData, err := cp.pki.clientCert(AdminUser, []string{"system:masters"})
	if err != nil {
		return nil, err
	}
	cp.admin = credentials{certData: certData, keyData: keyData}

	if err := cp.startEtcdFresh(ctx); err != nil {
		return nil, err
	}
	if err := cp.startAPIServerFresh(ctx); err != nil {
		return nil, err
	}
	cp.adminKubeconfig = filepath.Join(cp.dir, "admin.kubeconfig")
	if err := cp.writeKubeconfig(cp.adminKubeconfig, AdminUser, cp.admin); err != nil {
		return nil, err
	}
	return cp, nil
}

// Config returns a new admin (system:masters) client config on each call,
// so callers may mutate it.
func (cp *ControlPlane) Config() *rest.Config { return cp.restConfig(cp.admin) }

// KubeconfigPath is an admin kubeconfig file, for kubectl or a subprocess.
func (cp *ControlPlane) KubeconfigPath() string { return cp.adminKubeconfig }

// Host is the kube-apiserver URL; it stays the same across restarts.
func (cp *ControlPlane) Host() string { return fmt.Sprintf("https://127.0.0.1:%d", cp.apiPort) }

// APIPort is kube-apiserver's secure port on loopback; it stays the same across restarts.
func (cp *ControlPlane) APIPort() int { return cp.apiPort }

// EtcdURL is the etcd client URL.
func (cp *ControlPlane) EtcdURL() string { return fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPort) }

// Dir holds data, certificates (pki/), kubeconfigs and logs (logs/).
func (cp *ControlPlane) Dir() string { return cp.dir }

// EtcdVersion is what `etcd --version` reported, e.g. "3.6.8".
func (cp *ControlPlane) EtcdVersion() string { return cp.etcdVersion }

// AssetsDir is where the binaries were found.
func (cp *ControlPlane) AssetsDir() string { return cp.assets }

// Ports lists every TCP port the control plane and its components listen on.
func (cp *ControlPlane) Ports() []int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	ports := []int{cp.etcdPort, cp.etcdPeerPort, cp.apiPort}
	for _, c := range cp.components {
		ports = append(ports, c.Port())
	}
	return ports
}

// Processes returns etcd, kube-apiserver and every component started so far
// (including exited ones), e.g. to print their logs after a failure.
func (cp *ControlPlane) Processes() []*Process {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var ps []*Process
	for _, p := range []*Process{cp.etcd, cp.apiserver} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return append(ps, cp.components...)
}

// Stop stops components, kube-apiserver and etcd, in that order, and
// removes a defaulted Dir. It is idempotent.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	if cp.stopped {
		cp.mu.Unlock()
		return nil
	}
	cp.stopped = true
	procs := append([]*Process{}, cp.components...)
	procs = append(procs, cp.apiserver, cp.etcd)
	cp.mu.Unlock()

	var errs []error
	for _, p := range procs {
		if p == nil {
			continue
		}
		if err := p.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if cp.ownDir {
		if err := os.RemoveAll(cp.dir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", cp.dir, err))
		}
	}
	return errors.Join(errs...)
}

// buildHint says how to get the binaries.
const buildHint = "build them with: export KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh | tail -1)"

// findAssets resolves and checks the binary directory. A missing directory
// is an error, never a skip: a silently skipped integration test proves
// nothing.
func findAssets(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if dir == "" {
		return "", fmt.Errorf("KUBEBUILDER_ASSETS is not set; %s", buildHint)
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("control plane binary missing in KUBEBUILDER_ASSETS=%s: %w; %s", dir, err, buildHint)
		}
	}
	return dir, nil
}
