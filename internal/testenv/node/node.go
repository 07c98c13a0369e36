package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// Options configures Start.
type Options struct {
	// Images are image archives (OCI or docker-archive) to import into containerd before
	// the kubelet starts; Pods that use them need imagePullPolicy Never or IfNotPresent.
	Images []string
	// APIServerArgs are extra kube-apiserver flags, as in controlplane.Options.
	APIServerArgs []string
}

// controllers are the kube-controller-manager controllers a Deployment with a Service, a
// ServiceAccount and a PodDisruptionBudget needs; the full set would only burn CPU.
var controllers = []string{
	"serviceaccount-token-controller", "serviceaccount-controller", "namespace-controller",
	"root-ca-certificate-publisher-controller", "deployment-controller", "replicaset-controller",
	"endpoints-controller", "endpointslice-controller", "garbage-collector-controller",
	"node-lifecycle-controller", "pod-garbage-collector-controller", "disruption-controller",
}

// Node is a running one-node cluster.
type Node struct {
	cp     *controlplane.ControlPlane
	lock   *os.File
	reaper *reaper
	fwd    *forwarder
	procs  []*controlplane.Process // containerd, kubelet, kube-proxy, in start order
}

// Start cleans up after any earlier node, then brings up the control plane (with the
// scheduler and controller-manager), containerd, the kubelet and kube-proxy, and returns once
// the Node is Ready. It waits for the node lock while another node runs. On error everything
// it did is undone.
func Start(ctx context.Context, opts Options) (_ *Node, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a test node needs root (network namespaces, iptables, cgroups, mounts)")
	}
	n := &Node{}
	if n.lock, err = os.OpenFile(LockPath, os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(n.lock.Fd()), syscall.LOCK_EX); err != nil {
		n.lock.Close()
		return nil, fmt.Errorf("lock %s: %w", LockPath, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Stop())
		}
	}()
	if err := Cleanup(func(string, ...any) {}); err != nil {
		return nil, fmt.Errorf("clean up after an earlier node: %w", err)
	}
	if err := checkHost(); err != nil {
		return nil, err
	}
	if n.reaper, err = startReaper(n.lock); err != nil {
		return nil, err
	}
	if err := recordBefore(); err != nil {
		return nil, fmt.Errorf("record host state: %w", err)
	}
	if err := os.MkdirAll(workPath("logs"), 0o755); err != nil {
		return nil, err
	}
	if err := createBridge(); err != nil {
		return nil, err
	}
	n.cp, err = controlplane.Start(ctx, controlplane.Options{APIServerArgs: append([]string{
		"--advertise-address=" + NodeIP,
		"--endpoint-reconciler-type=lease",
		"--kubelet-preferred-address-types=InternalIP",
		"--enable-admission-plugins=NodeRestriction",
		// A SIGTERMed API server ends within seconds instead of serving open watches until
		// its request timeout (internal/testenv/testsuite/outage.go says why).
		"--shutdown-send-retry-after=true",
	}, opts.APIServerArgs...)})
	if err != nil {
		return nil, err
	}
	if n.fwd, err = forward(n.cp.APIPort()); err != nil {
		return nil, err
	}
	for _, c := range []struct{ name, args string }{
		{controlplane.KubeScheduler, ""},
		{controlplane.KubeControllerManager, "--controllers=" + strings.Join(controllers, ",")},
	} {
		var args []string
		if c.args != "" {
			args = append(args, c.args)
		}
		if _, err := n.cp.StartComponent(ctx, c.name, args...); err != nil {
			return nil, err
		}
	}
	if err := n.startRuntime(ctx, opts.Images); err != nil {
		return nil, err
	}
	return n, n.waitReady(ctx)
}

func (n *Node) startRuntime(ctx context.Context, images []string) error {
	p, err := startContainerd(ctx)
	n.addProc(p)
	if err != nil {
		return err
	}
	pause, err := BuildGoImage(workPath(), "github.com/lease-exporter/lease-exporter/internal/testenv/node/pause", PauseImage)
	if err != nil {
		return err
	}
	for _, img := range append([]string{pause}, images...) {
		if err := ImportImage(ctx, img); err != nil {
			return err
		}
	}
	p, err = startKubelet(ctx, n.cp)
	n.addProc(p)
	if err != nil {
		return err
	}
	p, err = startKubeProxy(ctx, n.cp)
	n.addProc(p)
	return err
}

func (n *Node) addProc(p *controlplane.Process) {
	if p != nil {
		n.procs = append(n.procs, p)
	}
}

func (n *Node) waitReady(ctx context.Context) error {
	client := kubernetes.NewForConfigOrDie(n.cp.Config())
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		node, err := client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready: %v (kubelet log %s)", NodeName, err, workPath("logs", "kubelet.log"))
		case <-time.After(time.Second):
		}
	}
}

// ControlPlane is the node's control plane.
func (n *Node) ControlPlane() *controlplane.ControlPlane { return n.cp }

// Processes are the node's own processes and the control plane's, for logs after a failure.
func (n *Node) Processes() []*controlplane.Process {
	var ps []*controlplane.Process
	if n.cp != nil {
		ps = n.cp.Processes()
	}
	return append(ps, n.procs...)
}

// RestartKubelet stops the kubelet (SIGTERM) and starts it again with the same configuration
// and root directory, as `systemctl restart kubelet` does on a real node: the Pods keep
// running, and the new kubelet takes them over.
func (n *Node) RestartKubelet(ctx context.Context) error {
	return n.restart("kubelet", func() (*controlplane.Process, error) { return startKubelet(ctx, n.cp) })
}

// RestartContainerd stops containerd (SIGTERM) and starts it again: the containers keep
// running under their shims, and the kubelet reconnects.
func (n *Node) RestartContainerd(ctx context.Context) error {
	return n.restart("containerd", func() (*controlplane.Process, error) { return startContainerd(ctx) })
}

func (n *Node) restart(name string, start func() (*controlplane.Process, error)) error {
	for i, p := range n.procs {
		if p.Name() != name {
			continue
		}
		if err := p.Stop(); err != nil {
			return fmt.Errorf("stop %s: %w", name, err)
		}
		np, err := start()
		if np != nil {
			n.procs[i] = np
		}
		return err
	}
	return fmt.Errorf("no %s on this node", name)
}

// Stop stops everything, undoes every host change (Cleanup) and releases the lock.
func (n *Node) Stop() error {
	var errs []error
	for i := len(n.procs) - 1; i >= 0; i-- {
		_ = n.procs[i].Kill()
	}
	// The containers outlive the kubelet and containerd; while they hold watches open the API
	// server would wait out its shutdown grace for them.
	errs = append(errs, killNodeProcesses(func(string, ...any) {}))
	if n.fwd != nil {
		n.fwd.Close()
	}
	if n.cp != nil {
		errs = append(errs, n.cp.Stop())
	}
	if n.reaper != nil {
		// The reaper runs Cleanup (so the same code runs on every path) and exits.
		errs = append(errs, n.reaper.finish())
	} else {
		errs = append(errs, Cleanup(func(string, ...any) {}))
	}
	if n.lock != nil {
		n.lock.Close()
	}
	return errors.Join(errs...)
}

// hostTools are what the node runs on the host, with the Debian package of each: hack/deps.sh
// release installs them all.
var hostTools = []struct{ path, pkg string }{
	{"containerd", "containerd"}, {"ctr", "containerd"}, {"runc", "runc"},
	{"iptables-save", "iptables"}, {"iptables-restore", "iptables"}, {"ip6tables-save", "iptables"},
	{"nft", "nftables"}, {"conntrack", "conntrack"}, {"ip", "iproute2"},
	{"/usr/lib/cni/bridge", "containernetworking-plugins"}, {"/usr/lib/cni/host-local", "containernetworking-plugins"},
	{"/usr/lib/cni/loopback", "containernetworking-plugins"},
}

// checkHost refuses a host the node would disturb or could not run on.
func checkHost() error {
	var missing []string
	for _, t := range hostTools {
		if _, err := exec.LookPath(t.path); err != nil {
			missing = append(missing, t.path+" (Debian's "+t.pkg+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("a test node needs %s: hack/deps.sh release installs them", strings.Join(missing, ", "))
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		return errors.New("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory: the test node is written for this cgroup v1 host")
	}
	if kube, err := hasKubeChains(); err != nil || kube {
		return fmt.Errorf("this host already has KUBE-* iptables chains (a Kubernetes node of its own?): %v", err)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", Bridge)); err == nil {
		return fmt.Errorf("bridge %s exists and no node state explains it: delete it (ip link del %s)", Bridge, Bridge)
	}
	return checkRoutes()
}
