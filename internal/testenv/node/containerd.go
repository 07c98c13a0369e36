package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

func containerdSocket() string { return workPath("containerd", "containerd.sock") }

// containerdConfig keeps every path under Workdir (root, state, sockets, the shims' runc
// root, network namespaces), so that Cleanup finds all of it. restrict_oom_score_adj: these
// VMs deny root CAP_SYS_RESOURCE, and runc fails to start a sandbox when it may not lower
// oom_score_adj ("can't get final child's PID from pipe: EOF").
func containerdConfig() string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = "%[3]s.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[8]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
`, workPath("containerd", "root"), workPath("containerd", "state"), containerdSocket(),
		workPath("containerd", "opt"), PauseImage, workPath("cni", "net.d"), workPath("containerd", "runc"),
		registryHosts())
}

// cniConfig is the bridge network. No isGateway (it would turn on ip_forward) and no ipMasq
// (it would NAT Pods out of eth0): Pods reach only the bridge's own subnet and, through
// NodeIP, the Service range, where kube-proxy's DNAT lands on NodeIP (the API server
// forwarder) or on a Pod.
func cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "lease-exporter-node",
  "plugins": [{
    "type": "bridge",
    "bridge": %q,
    "isGateway": false,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": %q,
      "ranges": [[{"subnet": %q, "rangeStart": "10.244.0.10", "gateway": %q}]],
      "routes": [{"dst": %q}]
    }
  }]
}
`, Bridge, workPath("cni", "ipam"), PodCIDR, NodeIP, ServiceCIDR)
}

func startContainerd(ctx context.Context) (*controlplane.Process, error) {
	path, err := exec.LookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("containerd not found (hack/deps.sh release installs Debian's containerd): %w", err)
	}
	if err := writeFiles(map[string]string{
		workPath("containerd", "config.toml"):                  containerdConfig(),
		workPath("cni", "net.d", "10-lease-exporter.conflist"): cniConfig(),
	}); err != nil {
		return nil, err
	}
	p, err := controlplane.StartProcess("containerd", path, workPath("logs", "containerd.log"),
		[]string{"--config", workPath("containerd", "config.toml")})
	if err != nil {
		return nil, err
	}
	return p, waitFor(ctx, p, 60*time.Second, func() error {
		return exec.CommandContext(ctx, "ctr", "--address", containerdSocket(), "version").Run()
	})
}

// registryHosts is containerd's per-registry hosts.toml directory (config_path): empty, every
// registry is reached as containerd reaches it by default; TrustLoopbackRegistry adds one.
func registryHosts() string { return workPath("containerd", "certs.d") }

// TrustLoopbackRegistry lets the node's containerd pull from the plain-HTTP registry at
// hostport (127.0.0.1:port, a test's own), as a user's hosts.toml would for a registry of
// theirs; containerd reads it at each pull, so no restart is needed.
func TrustLoopbackRegistry(hostport string) error {
	if host, _, err := net.SplitHostPort(hostport); err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("TrustLoopbackRegistry(%q): give a loopback host:port; test traffic stays on loopback", hostport)
	}
	return writeFiles(map[string]string{
		filepath.Join(registryHosts(), hostport, "hosts.toml"): fmt.Sprintf(`server = "http://%[1]s"

[host."http://%[1]s"]
  capabilities = ["pull", "resolve"]
`, hostport),
	})
}

// ImportImage loads an image archive (OCI or docker-archive) into the CRI's namespace.
func ImportImage(ctx context.Context, archive string) error {
	out, err := exec.CommandContext(ctx, "ctr", "--address", containerdSocket(), "-n", "k8s.io",
		"images", "import", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", archive, err, out)
	}
	return nil
}

func writeFiles(files map[string]string) error {
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
