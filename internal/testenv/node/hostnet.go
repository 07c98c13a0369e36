package node

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// checkRoutes refuses a host whose routes overlap the node's ranges: the bridge's connected
// route would shadow them, and Pod traffic could reach a real network.
func checkRoutes() error {
	out, err := exec.Command("ip", "-o", "route", "show", "table", "all").Output()
	if err != nil {
		return fmt.Errorf("ip route: %w", err)
	}
	ours := []netip.Prefix{netip.MustParsePrefix(PodCIDR), netip.MustParsePrefix(ServiceCIDR)}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if dst == "local" || dst == "broadcast" || dst == "unreachable" {
			if len(f) < 2 {
				continue
			}
			dst = f[1]
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		p, err := netip.ParsePrefix(dst)
		if err != nil || !p.Addr().Is4() || p.Bits() == 0 {
			continue
		}
		for _, o := range ours {
			if p.Overlaps(o) {
				return fmt.Errorf("route %q overlaps the node's range %s: the test node cannot run on this host without sending Pod traffic to a real network", line, o)
			}
		}
	}
	return nil
}

func createBridge() error {
	if err := run("ip", "link", "add", Bridge, "type", "bridge"); err != nil {
		return err
	}
	if err := run("ip", "addr", "add", NodeIP+"/24", "dev", Bridge); err != nil {
		return err
	}
	return run("ip", "link", "set", Bridge, "up")
}

// makeCgroupRoot creates CgroupRoot in every cgroup v1 hierarchy (the kubelet refuses a root
// that does not exist). A new cpuset cgroup starts with no CPUs or memory nodes, so it
// inherits the parent's.
func makeCgroupRoot() error {
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*/cgroup.procs")
	for _, procs := range hierarchies {
		dir := filepath.Join(filepath.Dir(procs), CgroupRoot)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(procs)) != "cpuset" {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(filepath.Dir(procs), f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("cgroup %s: %w", f, err)
			}
		}
	}
	return nil
}

// freePorts picks n distinct free loopback ports (held open together, so none repeats).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// forwarder accepts on NodeIP at the API server's port and dials the API server on loopback:
// the "kubernetes" Service's endpoint is NodeIP (the only host address Pods can reach), while
// the API server, like every server of the tests, listens on loopback only.
type forwarder struct {
	l  net.Listener
	wg sync.WaitGroup
}

func forward(port int) (*forwarder, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(NodeIP, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen on the node address: %w", err)
	}
	f := &forwarder{l: l}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go pipe(in, "127.0.0.1:"+strconv.Itoa(port))
		}
	}()
	return f, nil
}

func pipe(in net.Conn, target string) {
	defer in.Close()
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

func (f *forwarder) Close() {
	f.l.Close()
	f.wg.Wait()
}
