// Package testsuite is the harness of the suites that share one control plane and exporter
// build per package (test/integration, test/reliability, test/e2e): their TestMain (Main), the
// shared environment (Suite: the control plane started while the release binary builds,
// exporters that print their log when a test fails, API server outages that start promptly),
// and which tests may run side by side on it (Shared, Exclusive).
package testsuite

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
)

// Env is a suite's shared environment. Teardown runs after the tests, told whether any failed
// so it can print its processes' logs; an error from it fails the package.
type Env interface {
	Teardown(failed bool) error
}

// Main runs the package's tests in a fresh directory and returns the exit code. The directory
// is named lease-exporter-<name>-*, so `pgrep -f lease-exporter-<name>-` finds any process a
// run left behind; it is removed at the end unless something failed, when it keeps every
// process's full log. setup builds the shared environment in it (cleaning up after itself if
// it fails) and Main stores it in *env for the tests; a setup failure fails the package (exit
// 1 with the reason) and never skips it: a silently skipped suite proves nothing.
func Main[E Env](m *testing.M, name string, env *E, setup func(dir string) (E, error)) (code int) {
	dir, err := os.MkdirTemp("", "lease-exporter-"+name+"-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	defer func() {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "%s: logs and data kept in %s\n", name, dir)
			return
		}
		os.RemoveAll(dir)
	}()
	e, err := setup(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: setup failed: %v\n", name, err)
		return 1
	}
	*env = e
	defer func() {
		if err := e.Teardown(code != 0); err != nil {
			fmt.Fprintf(os.Stderr, "%s: teardown: %v\n", name, err)
			code = 1
		}
	}()
	return m.Run()
}

// Tail returns the last n lines of s, for logs in failure messages.
func Tail(s string, n int) string { return controlplane.Tail(s, n) }

// Eventually polls cond every poll until it reports true, and fails t after timeout with
// what it waited for and cond's last description of the state.
func Eventually(t testing.TB, timeout, poll time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, detail)
		}
		time.Sleep(poll)
	}
}
