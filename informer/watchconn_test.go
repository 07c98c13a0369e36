package informer

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// scriptedConn returns reads of the scripted sizes, one per Read call.
type scriptedConn struct {
	net.Conn
	reads []int
}

func (c *scriptedConn) Read(p []byte) (int, error) {
	n := min(c.reads[0], len(p))
	c.reads = c.reads[1:]
	return n, nil
}

func (c *scriptedConn) Write(p []byte) (int, error) { return len(p), nil }

func TestBatchingConnDelaysOnlyAfterDrainingTheSocket(t *testing.T) {
	const batch = 100 * time.Millisecond
	clock := time.Unix(1000, 0)
	var slept []time.Duration
	inner := &scriptedConn{}
	c := newBatchingConn(inner, batch)
	c.now = func() time.Time { return clock }
	c.sleep = func(d time.Duration) { slept = append(slept, d); clock = clock.Add(d) }
	buf := make([]byte, 4096)
	read := func(n int, after time.Duration) {
		t.Helper()
		clock = clock.Add(after) // time spent decoding, or blocked waiting for data
		inner.reads = []int{n}
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
	}

	read(4096, 0) // a backlog: the buffer fills
	read(4096, 0) // still a backlog: no delay
	if len(slept) != 0 {
		t.Fatalf("reads of a backlog were delayed: %v", slept)
	}
	read(300, 0)                    // caught up with the API server
	read(4096, 30*time.Millisecond) // the next read waits out the rest of the batch
	if len(slept) != 1 || slept[0] != 70*time.Millisecond {
		t.Fatalf("read after draining slept %v, want [70ms]", slept)
	}
	read(300, 0)
	read(300, 250*time.Millisecond) // a batch already passed (e.g. decoding a big burst): no delay
	if len(slept) != 1 {
		t.Fatalf("read after a batch had already passed slept %v", slept[1:])
	}

	// A request (a new watch on this connection) is answered without delay however long the
	// API server takes, and the answer's first second is read unbatched.
	if _, err := c.Write([]byte("GET /apis/coordination.k8s.io/v1/leases?watch=1")); err != nil {
		t.Fatal(err)
	}
	read(300, 2*time.Second) // headers after a slow start (priority and fairness queueing)
	read(300, 0)
	read(300, 500*time.Millisecond)
	if len(slept) != 1 {
		t.Fatalf("answer to a fresh request was delayed: %v", slept[1:])
	}
	read(300, requestGrace)
	read(300, 0)
	if len(slept) != 2 || slept[1] != batch {
		t.Fatalf("after the grace second, slept %v, want a second delay of %s", slept, batch)
	}

	// Paused (a streaming list is sending its initial events): no delays at all.
	paused := true
	c.pause = func() bool { return paused }
	read(300, 0)
	read(300, 0)
	if len(slept) != 2 {
		t.Fatalf("reads delayed while paused: %v", slept[2:])
	}
	paused = false
	read(300, 0)
	if len(slept) != 3 {
		t.Fatalf("batching did not resume after the pause: %v", slept)
	}
}

func TestWatchConfig(t *testing.T) {
	base := &rest.Config{Host: "https://example:6443", UserAgent: "lease-exporter/test"}
	if got := watchConfig(base, 0, nil); got != base {
		t.Fatal("batch 0 must leave the config as it is (HTTP/2, no batching)")
	}
	w := watchConfig(base, 100*time.Millisecond, nil)
	if w == base || base.Dial != nil || len(base.TLSClientConfig.NextProtos) != 0 {
		t.Fatal("watchConfig modified the config the lists use")
	}
	if len(w.TLSClientConfig.NextProtos) != 1 || w.TLSClientConfig.NextProtos[0] != "http/1.1" || w.Dial == nil {
		t.Fatalf("watch config: NextProtos %v, Dial set %v; want http/1.1 and a batching dialer", w.TLSClientConfig.NextProtos, w.Dial != nil)
	}
	if w.Host != base.Host || w.UserAgent != base.UserAgent {
		t.Fatal("watch config lost the connection settings")
	}
}

// TestWatchConnectionKeepalive checks the socket options that replace HTTP/2's pings: a
// watch whose peer vanished without a FIN or RST (a partition, a dead node) must fail within
// about 30 s, or watch_up would stay 1 while renewals silently stop arriving.
func TestWatchConnectionKeepalive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	cfg := watchConfig(&rest.Config{Host: "https://" + ln.Addr().String()}, time.Second, nil)
	c, err := cfg.Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bc, ok := c.(*batchingConn)
	if !ok {
		t.Fatalf("dialed %T, want *batchingConn", c)
	}
	raw, err := bc.Conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	_ = raw.Control(func(fd uintptr) {
		for name, opt := range map[string][2]int{
			"SO_KEEPALIVE": {syscall.SOL_SOCKET, syscall.SO_KEEPALIVE}, "TCP_KEEPIDLE": {syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE},
			"TCP_KEEPINTVL": {syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL}, "TCP_KEEPCNT": {syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT},
		} {
			got[name], _ = syscall.GetsockoptInt(int(fd), opt[0], opt[1])
		}
	})
	want := map[string]int{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 15, "TCP_KEEPINTVL": 5, "TCP_KEEPCNT": 3}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (dead connections noticed after %d+%d*%d s)", k, got[k], v, want["TCP_KEEPIDLE"], want["TCP_KEEPCNT"], want["TCP_KEEPINTVL"])
		}
	}
}
