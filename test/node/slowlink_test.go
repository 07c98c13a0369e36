//go:build release

package node_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// slowLink makes the API server slow for one Pod only. This machine's kernel has no netem
// qdisc, so the latency is added in user space: an nftables rule in the Pod's own network
// namespace redirects the Pod's connections to the kubernetes Service to a listener on the
// Pod's loopback, opened by the test in that namespace, which forwards them to the API
// server and holds every chunk the API server sends for delay before passing it on (the
// Pod's requests pass at once: like netem on the Pod's veth, it adds delay to each round
// trip). The queue of held chunks is bounded, so a slow reader pushes back on the sender.
type slowLink struct {
	ln         net.Listener
	target     string
	delay      time.Duration
	conns      atomic.Int64
	bytesDown  atomic.Int64
	wg         sync.WaitGroup
	mu         sync.Mutex
	open       []net.Conn
	closed     bool // set by Close: a connection accepted after it is closed at once
	removeRule func() error
}

// newSlowLink opens the link for the process pid's network namespace and installs the
// redirect; Close undoes both. Connections the Pod already has are left alone (their NAT was
// decided when they opened), so only new ones are slow.
func newSlowLink(t *testing.T, c *cluster, pid int, delay time.Duration) *slowLink {
	t.Helper()
	ctx := context.Background()
	svc, err := c.client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := c.client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || len(eps.Subsets) == 0 || len(eps.Subsets[0].Addresses) == 0 || len(eps.Subsets[0].Ports) == 0 {
		t.Fatalf("the kubernetes Service's endpoints: %v %v", eps, err)
	}
	target := net.JoinHostPort(eps.Subsets[0].Addresses[0].IP, strconv.Itoa(int(eps.Subsets[0].Ports[0].Port)))
	ln, err := listenInNetns(pid)
	if err != nil {
		t.Fatalf("listen in the Pod's network namespace: %v", err)
	}
	l := &slowLink{ln: ln, target: target, delay: delay}
	port := ln.Addr().(*net.TCPAddr).Port
	rules := fmt.Sprintf(`table ip lease_exporter_slow {
	chain out { type nat hook output priority -100; ip daddr %s tcp dport %d redirect to :%d; }
}
`, svc.Spec.ClusterIP, svc.Spec.Ports[0].Port, port)
	file := filepath.Join(t.TempDir(), "slow.nft")
	if err := os.WriteFile(file, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	// The process is killed and restarted while the rule stands: the namespace is held open
	// here, and nft enters it through this process's descriptor.
	netns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	nsPath := fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), netns.Fd())
	nft := func(args ...string) error { return nftIn(nsPath, args...) }
	if err := nft("-f", file); err != nil {
		ln.Close()
		netns.Close()
		t.Fatal(err)
	}
	l.removeRule = func() error {
		defer netns.Close()
		return nft("delete", "table", "ip", "lease_exporter_slow")
	}
	l.wg.Add(1)
	go l.serve()
	return l
}

// listenInNetns opens a TCP listener on 127.0.0.1 inside the network namespace of pid: a
// socket stays in the namespace it was made in, whichever thread uses it later.
func listenInNetns(pid int) (net.Listener, error) {
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer own.Close()
	target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	ln, lerr := net.Listen("tcp", "127.0.0.1:0")
	if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays in the Pod's namespace: keep it locked, so it ends with this
		// goroutine instead of serving others.
		if ln != nil {
			ln.Close()
		}
		return nil, fmt.Errorf("return to the test's network namespace: %w", err)
	}
	runtime.UnlockOSThread()
	return ln, lerr
}

func (l *slowLink) serve() {
	defer l.wg.Done()
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp", l.target, 10*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		l.conns.Add(1)
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			in.Close()
			out.Close()
			return
		}
		l.open = append(l.open, in, out)
		l.mu.Unlock()
		l.wg.Add(2)
		go func() { defer l.wg.Done(); forward(out, in, 0, nil) }()
		go func() { defer l.wg.Done(); forward(in, out, l.delay, &l.bytesDown) }()
	}
}

// forward copies src to dst, each chunk delay after it was read, and closes dst's write
// side when src ends.
func forward(dst, src net.Conn, delay time.Duration, counted *atomic.Int64) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	held := make(chan chunk, 4096) // at most 4096 reads of up to 32 KiB in flight
	go func() {
		defer close(held)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 { // a copy of its size: a watch's small reads must not pin 32 KiB each
				held <- chunk{slices.Clone(buf[:n]), time.Now().Add(delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range held {
		time.Sleep(time.Until(ch.at))
		if _, err := dst.Write(ch.b); err != nil {
			src.Close()
			break
		}
		if counted != nil {
			counted.Add(int64(len(ch.b)))
		}
	}
	for range held { // drain, so the reader ends
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// Close removes the redirect, closes every forwarded connection and waits for the copies.
func (l *slowLink) Close() error {
	err := l.removeRule()
	l.ln.Close()
	l.mu.Lock()
	l.closed = true
	for _, c := range l.open {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

// slowInitialList restarts the exporter in Pod p (SIGKILL; the kubelet starts it again in
// the same network namespace) behind a slowLink of delay, so that its initial list of every
// Lease crosses the slow link, and checks that it syncs and that its probes leave it alone
// meanwhile: exactly the one restart the test caused, Ready only once synced.
func slowInitialList(t *testing.T, c *cluster, p corev1.Pod, want int, delay time.Duration) {
	baseline := grepLines(c.kubectl(t, "logs", "-n", releaseNS, p.Name), "lease cache synced")
	restarts := p.Status.ContainerStatuses[0].RestartCount
	pid := exporterPid(t, &p)
	link := newSlowLink(t, c, pid, delay)
	defer func() {
		if err := link.Close(); err != nil {
			t.Error(err)
		}
	}()
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var readyAt time.Duration
	for {
		// The Pod's readiness first, then what it exports: Ready must never come before all of it.
		now, err := c.client.CoreV1().Pods(releaseNS).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := exportedLocks(p.Status.PodIP)
		if n := now.Status.ContainerStatuses[0].RestartCount; n > restarts+1 {
			t.Fatalf("the exporter was restarted %d more times while it listed behind a %s link: its probes killed it", n-restarts-1, delay)
		}
		if podReady(now) && readyAt == 0 && now.Status.ContainerStatuses[0].RestartCount == restarts+1 {
			readyAt = time.Since(killed)
			if got < want {
				t.Errorf("Pod %s Ready %s after the restart with %d of %d locks exported", p.Name, readyAt.Round(time.Second), got, want)
			}
		}
		if got >= want && readyAt != 0 {
			break
		}
		if time.Since(killed) > 10*time.Minute {
			t.Fatalf("behind a %s link the exporter exported %d of %d locks 10 minutes after its restart", delay, got, want)
		}
		time.Sleep(time.Second)
	}
	synced := grepLines(c.kubectl(t, "logs", "-n", releaseNS, p.Name), "lease cache synced")
	if link.conns.Load() == 0 || link.bytesDown.Load() < 1<<20 {
		t.Fatalf("the restarted exporter's list did not cross the slow link (%d connections, %d bytes)", link.conns.Load(), link.bytesDown.Load())
	}
	t.Logf("initial list of %d Leases with %s added to every answer of the API server: Ready %s after the kill; %d connections, %d MiB through the link\n"+
		"  synced behind the link: %s\n  synced at install:      %s",
		want, delay, readyAt.Round(100*time.Millisecond), link.conns.Load(), link.bytesDown.Load()>>20, synced, baseline)
}
