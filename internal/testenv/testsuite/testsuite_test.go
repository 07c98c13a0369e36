package testsuite

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain gives TestExclusiveRunsAfterShared the slots Exclusive needs on a one-core machine.
func TestMain(m *testing.M) {
	SetParallel(4)
	os.Exit(m.Run())
}

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := Tail(tc.in, tc.n); got != tc.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestExclusiveRunsAfterShared: an Exclusive test starts only once every Shared test has
// finished, whatever their order, so it may take the control plane away from them.
func TestExclusiveRunsAfterShared(t *testing.T) {
	var s Suite
	var finished atomic.Int32
	t.Run("group", func(t *testing.T) {
		t.Run("exclusive", func(t *testing.T) {
			s.Exclusive(t)
			if n := finished.Load(); n != 3 {
				t.Errorf("Exclusive ran when %d of 3 Shared tests had finished", n)
			}
		})
		for i := range 3 {
			t.Run(fmt.Sprint("shared", i), func(t *testing.T) {
				s.Shared(t)
				time.Sleep(time.Duration(i*20) * time.Millisecond)
				finished.Add(1)
			})
		}
	})
}
