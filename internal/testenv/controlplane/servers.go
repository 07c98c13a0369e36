package controlplane

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// portAttempts bounds retries when a port picked by freePort was taken by
// someone else before the server bound it (parallel test packages).
const portAttempts = 3

// minEtcdMinor is the oldest etcd 3.x the harness runs. Kubernetes 1.34 and later are released
// with etcd 3.6; etcd 3.4 (e.g. Debian bookworm's) lacks RequestWatchProgress, so the API server
// refuses streaming lists and every client falls back to LIST, which is not what clusters do.
const minEtcdMinor = 5

// startEtcdFresh picks ports and starts etcd, retrying on a port race.
func (cp *ControlPlane) startEtcdFresh(ctx context.Context) error {
	var err error
	if cp.etcdVersion, err = etcdVersion(filepath.Join(cp.assets, "etcd")); err != nil {
		return err
	}
	for range portAttempts {
		if cp.etcdPort, err = freePort(); err != nil {
			return err
		}
		if cp.etcdPeerPort, err = freePort(); err != nil {
			return err
		}
		peer := fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPeerPort)
		cp.etcdArgs = []string{
			"--name=controlplane",
			"--data-dir=" + filepath.Join(cp.dir, "etcd"),
			"--listen-client-urls=" + cp.EtcdURL(),
			"--advertise-client-urls=" + cp.EtcdURL(),
			// The peer flags all default to localhost:2380; set them so two
			// control planes never collide and the cluster config agrees.
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=controlplane=" + peer,
			// Throwaway data: durability only costs time on a busy disk.
			"--unsafe-no-fsync=true",
			// etcd's default 2 GiB quota is reached by hack/bench -configmaps (1 GB of
			// ConfigMaps rewritten 50 times a second between compactions); etcd then refuses
			// every write. 8 GiB is the largest size etcd recommends.
			"--quota-backend-bytes=8589934592",
		}
		if err = cp.startEtcd(ctx); err == nil || !portTaken(err) {
			return err
		}
	}
	return err
}

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	p, err := startProcess("etcd", filepath.Join(cp.assets, "etcd"),
		filepath.Join(cp.dir, "logs", "etcd.log"), cp.etcdPort, cp.etcdArgs)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.etcd = p
	cp.mu.Unlock()
	if err := waitHealthy(ctx, p, plainHTTPClient(), cp.EtcdURL()+"/health", cp.opts.StartTimeout); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

// RestartEtcd stops etcd gracefully and starts it again on the same ports
// with the same data; kube-apiserver reconnects on its own.
func (cp *ControlPlane) RestartEtcd() error {
	cp.mu.Lock()
	p := cp.etcd
	cp.mu.Unlock()
	if err := p.Stop(); err != nil {
		return fmt.Errorf("stop etcd: %w", err)
	}
	return cp.startEtcd(context.Background())
}

// startAPIServerFresh picks the secure port and starts kube-apiserver,
// retrying on a port race. Later restarts keep this port.
func (cp *ControlPlane) startAPIServerFresh(ctx context.Context) error {
	audit, err := cp.auditArgs()
	if err != nil {
		return err
	}
	for range portAttempts {
		if cp.apiPort, err = freePort(); err != nil {
			return err
		}
		cp.apiArgs = mergeArgs(append(cp.apiServerDefaults(), audit...), cp.opts.APIServerArgs)
		if err = cp.startAPIServer(ctx); err == nil || !portTaken(err) {
			return err
		}
	}
	return err
}

func (cp *ControlPlane) apiServerDefaults() []string {
	return []string{
		"--etcd-servers=" + cp.EtcdURL(),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.apiPort),
		"--tls-cert-file=" + cp.pki.path("apiserver.crt"),
		"--tls-private-key-file=" + cp.pki.path("apiserver.key"),
		"--client-ca-file=" + cp.pki.path("ca.crt"),
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.pki.path("sa.pub"),
		"--service-account-signing-key-file=" + cp.pki.path("sa.key"),
		// The endpoint reconciler would publish 127.0.0.1 as the
		// "kubernetes" Service endpoint, which validation rejects (loopback),
		// and log an error every few seconds.
		"--endpoint-reconciler-type=none",
		"--requestheader-client-ca-file=" + cp.pki.path("ca.crt"),
		"--requestheader-allowed-names=" + frontProxyUser,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + cp.pki.path("front-proxy-client.crt"),
		"--proxy-client-key-file=" + cp.pki.path("front-proxy-client.key"),
		"--cert-dir=" + filepath.Join(cp.dir, "pki", "apiserver-generated"),
		"--profiling=false",
	}
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	p, err := startProcess("kube-apiserver", filepath.Join(cp.assets, "kube-apiserver"),
		filepath.Join(cp.dir, "logs", "kube-apiserver.log"), cp.apiPort, cp.apiArgs)
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.apiserver = p
	cp.mu.Unlock()
	client, err := httpClientFor(cp.Config())
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, p, client, cp.Host()+"/readyz", cp.opts.StartTimeout); err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	return nil
}

// StopAPIServer stops kube-apiserver gracefully; etcd and components keep
// running, so this simulates an API outage.
func (cp *ControlPlane) StopAPIServer() error {
	cp.mu.Lock()
	p := cp.apiserver
	cp.mu.Unlock()
	if err := p.Stop(); err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	return nil
}

// StartAPIServer starts kube-apiserver again with the same port, flags and
// certificates, so existing clients and kubeconfigs keep working.
func (cp *ControlPlane) StartAPIServer() error {
	cp.mu.Lock()
	p := cp.apiserver
	cp.mu.Unlock()
	if !p.Exited() {
		return fmt.Errorf("kube-apiserver is still running (pid %d)", p.PID())
	}
	return cp.startAPIServer(context.Background())
}

// mergeArgs appends extra to defaults; a flag in extra drops every default
// of the same name. Plain appending is not enough: repeating a list flag
// such as --controllers appends to it instead of replacing it.
func mergeArgs(defaults, extra []string) []string {
	override := map[string]bool{}
	for _, a := range extra {
		override[flagName(a)] = true
	}
	var out []string
	for _, a := range defaults {
		if !override[flagName(a)] {
			out = append(out, a)
		}
	}
	return append(out, extra...)
}

func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

// etcdVersion runs `etcd --version` and returns the version it reports, e.g. "3.6.8"; an etcd
// older than 3.minEtcdMinor is an error, so a stray system etcd cannot silently stand in.
func etcdVersion(path string) (string, error) {
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", path, err, out)
	}
	m := regexp.MustCompile(`etcd Version: (3\.(\d+)\.\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("%s --version: no \"etcd Version: 3.x.y\" in %q", path, out)
	}
	if minor, _ := strconv.Atoi(m[2]); minor < minEtcdMinor {
		return "", fmt.Errorf("%s is etcd %s; the harness needs 3.%d or later (%s)", path, m[1], minEtcdMinor, buildHint)
	}
	return m[1], nil
}
