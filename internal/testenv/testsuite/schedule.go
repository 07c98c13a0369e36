package testsuite

import (
	"flag"
	"strconv"
	"testing"
)

// Shared marks t as a test that can run beside every other Shared test of the package, on
// the same control plane: it keeps to its own namespaces and Leases. It calls t.Parallel, so
// the package's wall time is its slowest test's rather than the sum; a test that must have
// the control plane to itself is Exclusive instead.
func (s *Suite) Shared(t *testing.T) {
	// Counted before t.Parallel: every top-level test runs up to its t.Parallel call before
	// any parallel one resumes, so an Exclusive test's Wait sees every Shared test counted.
	s.running.Add(1)
	t.Cleanup(s.running.Done)
	t.Parallel()
}

// Exclusive marks t as a test that changes the control plane under every other (it stops the
// API server, say): it runs once every Shared test has finished. Like Shared tests it runs
// after the package's sequential tests, which go test always runs first.
func (s *Suite) Exclusive(t *testing.T) {
	// It holds one of -test.parallel's slots while it waits: with one slot no Shared test
	// could run, and the package would hang until go test's timeout.
	if n, _ := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); n < 2 {
		t.Fatalf("Exclusive needs -test.parallel 2 or more (it is %d): it waits for the Shared tests in a slot of its own", n)
	}
	t.Parallel()
	s.running.Wait()
}

// SetParallel raises -test.parallel to n unless the command line set it, for a package
// whose Shared tests mostly wait (on leases expiring, alerts' `for`), not compute: the
// default, GOMAXPROCS, would run two at a time. Call it from TestMain, before Main.
func SetParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
