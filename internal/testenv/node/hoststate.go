package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The sysctls something in the node may write: the kubelet sets its kernel defaults
// (protectKernelDefaults=false, the default, is the only mode in which it starts on a host that
// does not already have them), kube-proxy its conntrack limits and route_localnet (both turned
// off in its config, recorded anyway), the bridge plugin ip_forward (only with isGateway, which
// is off). Cleanup writes back what was there before.
var touchedSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet",
	"net/netfilter/nf_conntrack_max", "net/netfilter/nf_conntrack_tcp_timeout_established",
	"net/netfilter/nf_conntrack_tcp_timeout_close_wait",
}

// Paths outside Workdir that the node's components create with fixed names: the kubelet's
// device-plugin socket dir (hard-coded under /var/lib/kubelet) and /var/log/containers links,
// the CNI result cache (libcni's default), containerd shims' sockets (/run/containerd/s) and
// the iptables lock. Cleanup removes those that did not exist before the first Start.
var outsidePaths = []string{
	"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/var/lib/cni",
	"/run/containerd", "/run/xtables.lock",
}

// before is what the host looked like before the node changed anything, written to Workdir
// before the first change so that a Cleanup after a killed run restores it too.
type before struct {
	Sysctls map[string]string `json:"sysctls"`
	Existed map[string]bool   `json:"existed"`
	// Tables are the nftables tables ("ip mangle"): iptables-nft creates a table on first
	// use, and an empty one left behind still shows in iptables-save.
	Tables []string `json:"tables"`
}

func beforePath() string { return workPath("host-before.json") }

// recordBefore writes the host's state into Workdir, unless a killed run already did (the
// values there are the true originals; the current ones may be the node's).
func recordBefore() error {
	if _, err := os.Stat(beforePath()); err == nil {
		return nil
	}
	b := before{Sysctls: map[string]string{}, Existed: map[string]bool{}}
	for _, s := range touchedSysctls {
		if v, err := os.ReadFile(filepath.Join("/proc/sys", s)); err == nil {
			b.Sysctls[s] = strings.TrimSpace(string(v))
		}
	}
	for _, p := range outsidePaths {
		_, err := os.Lstat(p)
		b.Existed[p] = err == nil
	}
	tables, err := nftTables()
	if err != nil {
		return err
	}
	b.Tables = tables
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(Workdir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(beforePath(), data, 0o600)
}

func readBefore() (before, error) {
	var b before
	data, err := os.ReadFile(beforePath())
	if err != nil {
		return b, err
	}
	return b, json.Unmarshal(data, &b)
}

// restoreOutside writes back the recorded sysctls and removes the outside paths the node made.
func restoreOutside(b before) error {
	var errs []error
	for s, v := range b.Sysctls {
		p := filepath.Join("/proc/sys", s)
		cur, err := os.ReadFile(p)
		if err != nil || strings.TrimSpace(string(cur)) == v {
			continue
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", s, v, err))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(b.Existed)) {
		if b.Existed[p] {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}
