package testsuite

import (
	"testing"
	"time"
)

// outageArgs make a SIGTERMed kube-apiserver end within seconds, so an outage starts when a
// test stops the server. By default its graceful shutdown keeps open watches (the exporter's)
// until its 60 s request timeout, longer than the harness's 15 s SIGTERM grace, so every stop
// ended in SIGKILL after 15 s of a half-dead server that served the exporter's watch but
// refused the candidates' renewals. With this flag it answers 429 while in-flight requests
// drain, then gives open connections 2 s; the exporter's watch stays open, and current, until
// the process is gone. (--shutdown-watch-termination-grace-period=2s, which closes watches at
// the SIGTERM, also ends it promptly, but ends the watch cleanly: in a run with both flags
// the exporter logged one failure for TestAPIServerRestartedThreeTimes' three outages. The
// e2e suite overrides this with that flag alone, as it always ran: test/e2e/main_test.go says why.)
var outageArgs = []string{"--shutdown-send-retry-after=true"}

// StopAPIServer stops kube-apiserver (etcd keeps running): an API outage. Its exit can take
// longer than the harness's 15 s SIGTERM grace on a busy machine; killed is stopped too, so
// that is only logged. Any other failure fails t.
func (s *Suite) StopAPIServer(t testing.TB) {
	t.Helper()
	start := time.Now()
	if err := s.CP.StopAPIServer(); err != nil && !s.apiServerExited() {
		t.Fatalf("stop kube-apiserver: %v", err)
	} else if err != nil {
		t.Logf("kube-apiserver: %v", err)
	}
	t.Logf("kube-apiserver stopped in %s", time.Since(start).Round(100*time.Millisecond))
}

// StartAPIServer starts kube-apiserver again (same port, flags and certificates) and waits
// until it is ready.
func (s *Suite) StartAPIServer(t testing.TB) {
	t.Helper()
	start := time.Now()
	if err := s.CP.StartAPIServer(); err != nil {
		t.Fatalf("start kube-apiserver: %v", err)
	}
	t.Logf("kube-apiserver ready in %s", time.Since(start).Round(100*time.Millisecond))
}

// apiServerExited reports whether the latest kube-apiserver process has exited.
func (s *Suite) apiServerExited() bool {
	exited := false
	for _, p := range s.CP.Processes() {
		if p.Name() == "kube-apiserver" {
			exited = p.Exited()
		}
	}
	return exited
}
