package reliability_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
)

// TestSIGTERMDuringScrape sends SIGTERM while a scrape of 10k Leases is being written to a
// client that is not reading: the scrape must complete and the process exit 0 within 5 s.
func TestSIGTERMDuringScrape(t *testing.T) {
	ns := manyLeases(t)
	exp := env.StartReady(t, env.Bin, "--namespaces="+ns)
	waitFor(t, exp, "all Leases synced", func(s *exporterproc.Scrape) bool {
		return len(s.Series("lease_info", map[string]string{"namespace": ns})) == numLeases
	})

	// A tiny receive window, set before connecting, and no reading: once the kernel's buffers
	// are full the exporter's handler blocks in Write, so the scrape is certainly in flight.
	conn, err := (&net.Dialer{Control: smallReceiveBuffer}).Dial("tcp", exp.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// No Accept-Encoding: the uncompressed exposition is large enough to fill the buffers.
	fmt.Fprintf(conn, "GET /metrics HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", exp.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape response: %v %v", resp, err)
	}
	var body bytes.Buffer
	if _, err := io.CopyN(&body, resp.Body, 4096); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // let the server fill its send buffer and block

	sigterm := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- exp.Stop() }()
	time.Sleep(time.Second)
	// Shutting down: the listener is closed, new scrapes are refused...
	if c, err := net.DialTimeout("tcp", exp.Addr(), time.Second); err == nil {
		c.Close()
		t.Error("a new connection was accepted after SIGTERM")
	}
	// ...but the one in flight completes.
	if _, err := io.Copy(&body, resp.Body); err != nil {
		t.Fatalf("in-flight scrape cut off after %d bytes: %v", body.Len(), err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	exited := time.Since(sigterm)
	if code := exp.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	if exited > 5*time.Second {
		t.Errorf("exited %.1fs after SIGTERM, want within 5 s", exited.Seconds())
	}
	if limit := sendBufferMax(t); body.Len() < limit+64<<10 {
		t.Fatalf("exposition of %d bytes fits in the kernel's %d-byte send buffer: cannot prove the scrape was in flight", body.Len(), limit)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body.Bytes()))
	if err != nil {
		t.Fatalf("in-flight scrape does not parse: %v", err)
	}
	if n := len(fams["lease_info"].GetMetric()); n != numLeases {
		t.Errorf("in-flight scrape has %d lease_info series, want %d", n, numLeases)
	}
	t.Logf("scrape of %d bytes completed across SIGTERM; exited %.1fs after SIGTERM", body.Len(), exited.Seconds())
}

// smallReceiveBuffer sets SO_RCVBUF before connect, so the advertised TCP window stays small.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	}); err != nil {
		return err
	}
	return serr
}

// sendBufferMax is the largest send buffer the kernel autotunes a TCP socket to.
func sendBufferMax(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
