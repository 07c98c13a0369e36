package informer

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// watchConfig returns a copy of cfg for the exporter's watches, whose reads are batched: events
// that arrive within batch of each other are read from the socket together.
//
// Why: at steady churn events arrive one at a time, about a millisecond apart, and the process
// is idle in between, so every event pays for waking the Go scheduler, its threads and the
// goroutines of client-go's watch pipeline — about 80 µs of CPU per renewal on two cores,
// where decoding and caching the event costs under 10 µs. Letting events queue in the kernel
// for up to batch and reading them in one go shares that wake-up between all of them (see
// docs/benchmarks.md). Metrics are scraped every 10 s or more, so a batch of 250 ms is not
// visible in them.
//
// The watches use HTTP/1.1 so the socket is read by the goroutine that decodes events: over
// HTTP/2 a connection-wide read loop wakes for every frame, and every 4 KB read sends a
// flow-control update. HTTP/2's pings, which notice a dead connection, are replaced by TCP
// keepalives of the same reach (about 30 s without a packet). Lists keep using cfg.
//
// Reads are not delayed while pause reports true: the informer pauses batching while a
// streaming list sends its initial events, which arrive as fast as the API server can send.
//
// batch 0 returns cfg unchanged: every event is read as it arrives, over HTTP/2.
func watchConfig(cfg *rest.Config, batch time.Duration, pause func() bool) *rest.Config {
	if batch <= 0 {
		return cfg
	}
	w := rest.CopyConfig(cfg)
	w.TLSClientConfig.NextProtos = []string{"http/1.1"}
	dialer := &net.Dialer{
		Timeout:         30 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3},
	}
	if watchKeepAlive == "off" {
		dialer.KeepAlive, dialer.KeepAliveConfig = -1, net.KeepAliveConfig{}
	}
	w.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		bc := newBatchingConn(c, batch)
		bc.pause = pause
		return bc, nil
	}
	return w
}

// watchKeepAlive "off", set only by a test build (-ldflags -X
// github.com/lease-exporter/lease-exporter/informer.watchKeepAlive=off), takes the keepalives
// off the watch sockets: test/node's silent-network test runs such a build to show that it
// catches a watch that never notices a silent API server. Releases leave it "on".
var watchKeepAlive = "on"

// batchingConn delays a read that follows a read which emptied the socket, until batch has
// passed since that read: a stream that keeps up with its sender is read once per batch, a
// backlog (a relist, a burst) is read at full speed. The first bytes of the answer to a
// request written on the connection open a grace second without delays, so the API server's
// replay after a watch opens (or reopens after an outage) reaches the cache at once: the
// view is judged current from the moment the answer's headers arrive.
type batchingConn struct {
	net.Conn
	batch time.Duration
	pause func() bool // nil: never paused
	// Read state; HTTP/1.1 reads a connection from one goroutine at a time.
	lastRead   time.Time
	drained    bool
	graceUntil time.Time
	// requested is set by the request writer, concurrently with reads.
	requested atomic.Bool
	now       func() time.Time
	sleep     func(time.Duration)
}

// requestGrace is how long the answer to a request is read without delays, from its first bytes.
const requestGrace = time.Second

func newBatchingConn(c net.Conn, batch time.Duration) *batchingConn {
	return &batchingConn{Conn: c, batch: batch, now: time.Now, sleep: time.Sleep}
}

func (c *batchingConn) Read(p []byte) (int, error) {
	if c.drained && !c.requested.Load() && (c.pause == nil || !c.pause()) {
		if now := c.now(); !now.Before(c.graceUntil) {
			if wait := c.batch - now.Sub(c.lastRead); wait > 0 {
				c.sleep(wait)
			}
		}
	}
	n, err := c.Conn.Read(p)
	c.lastRead = c.now()
	c.drained = n < len(p)
	if n > 0 && c.requested.Swap(false) {
		c.graceUntil = c.lastRead.Add(requestGrace)
	}
	return n, err
}

func (c *batchingConn) Write(p []byte) (int, error) {
	c.requested.Store(true)
	return c.Conn.Write(p)
}
