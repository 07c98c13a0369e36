package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
)

// watchLeases makes the informer's Lease watches ws, one per watch it opens (the last for
// any after), and returns a channel that receives each opening.
func watchLeases(src *source, ws ...watch.Interface) <-chan struct{} {
	opened := make(chan struct{}, 10)
	var n atomic.Int32
	src.clients.List.(*fake.Clientset).PrependWatchReactor("leases", func(k8stesting.Action) (bool, watch.Interface, error) {
		i := min(int(n.Add(1)), len(ws)) - 1
		opened <- struct{}{}
		return true, ws[i], nil
	})
	return opened
}

// watching runs kubectl lease -w -n apps on src, with the API server's clock at now; it
// returns the output, a wait for a row, and the end, which interrupts it and checks it ends
// without an error.
func watching(t *testing.T, src *source, now *atomic.Int64) (out *syncbuffer.Buffer, waitFor func(string, func(string) bool), end func()) {
	t.Helper()
	src.clock.local = func() time.Time { return time.Unix(0, now.Load()) }
	out = &syncbuffer.Buffer{}
	cmd := newRootCommandWith(genericiooptions.IOStreams{Out: out, ErrOut: &syncbuffer.Buffer{}}, func(*options) (*source, error) { return src, nil })
	cmd.SetArgs([]string{"-n", "apps", "-w"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	waitFor = func(what string, ok func(string) bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !ok(out.String()); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("never printed %s:\n%s", what, out.String())
			}
		}
	}
	return out, waitFor, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("interrupted -w returned %v", err)
		}
	}
}

// row matches a printed row of the lock name: its holder, state and (when not "") skew.
func row(name, holder, state, skew string) func(string) bool {
	return func(s string) bool {
		for line := range strings.Lines(s) {
			if f := strings.Fields(line); len(f) > 8 && f[0] == name && f[3] == holder && f[4] == state && (skew == "" || f[8] == skew) {
				return true
			}
		}
		return false
	}
}

// waitOpen waits for the informer to open a watch.
func waitOpen(t *testing.T, opened <-chan struct{}) {
	t.Helper()
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the informer never opened its watch")
	}
}

// -w prints a row when a lock changes holder (observed live) and again when it expires with
// no write, judged by the clock moving on, and when it is deleted; Ctrl-C ends it without an
// error.
func TestWatchPrintsAHolderChangeAndAnExpiryWithoutAWrite(t *testing.T) {
	src := fixture(t)
	var now atomic.Int64
	now.Store(t0.UnixNano())
	w := watch.NewFakeWithChanSize(10, false)
	opened := watchLeases(src, w)
	out, waitFor, end := watching(t, src, &now)
	waitFor("the list", row("orders", "orders-7f9c-x2", "expired", "<unknown>"))
	waitOpen(t, opened)
	now.Add(int64(2 * time.Second)) // past the replay of the watch's opening: what follows is live
	// orders-new takes the lock, its clock 2 s behind (within the 3.75 s a 15 s lease
	// tolerates): held, judged from when the watch saw the write.
	taken := lease("apps", "orders", "orders-new", 0, 15, 2)
	taken.ResourceVersion = "8"
	w.Modify(taken)
	waitFor("the new holder on time", row("orders", "orders-new", "on_time", "-2.00s"))
	now.Add(int64(20 * time.Second)) // no renewal for 20 s of a 15 s lease
	waitFor("the expiry", row("orders", "orders-new", "expired", ""))
	if n := strings.Count(out.String(), "orders-new"); n != 2 {
		t.Errorf("orders-new printed %d times, want 2 (on time, then expired):\n%s", n, out.String())
	}
	w.Delete(lease("apps", "released", "", 30*time.Second, 15, 2))
	waitFor("the deletion", row("released", "<none>", "deleted", ""))
	end()
	if !strings.HasPrefix(out.String(), "NAME ") || strings.Count(out.String(), "NAME ") != 1 {
		t.Errorf("want one header, first:\n%s", out.String())
	}
}

// A watch reopened from an old resource version first replays what changed while it was
// closed; the exporter's stores take that replay as not live (replayGrace), so a renewal in
// it says nothing of the holder's clock. -w, reading through the same stores, reports no
// skew for it; the same renewal seen live a moment later is measured and flagged.
func TestWatchReopenedFromAnOldVersionReportsNoSkewTheExporterWouldNot(t *testing.T) {
	src := fixture(t)
	var now atomic.Int64
	now.Store(t0.UnixNano())
	first, reopened := watch.NewFakeWithChanSize(10, false), watch.NewFakeWithChanSize(10, false)
	opened := watchLeases(src, first, reopened)
	out, waitFor, end := watching(t, src, &now)
	defer end()
	waitFor("the list", row("orders", "orders-7f9c-x2", "expired", "<unknown>"))
	waitOpen(t, opened)
	now.Add(int64(5 * time.Second))
	first.Stop() // the connection drops; the reflector reopens from the last version it saw
	waitOpen(t, opened)
	// Replayed at once: a renewal stamped 20 s ahead of the API server's clock, written while
	// the watch was closed. Its renewTime says nothing of when it was written.
	at := time.Unix(0, now.Load())
	replayed := lease("apps", "orders", "orders-7f9c-x2", t0.Sub(at.Add(20*time.Second)), 15, 1)
	replayed.ResourceVersion = "8"
	reopened.Modify(replayed)
	waitFor("the replayed renewal", row("orders", "orders-7f9c-x2", "on_time", "<unknown>"))
	if strings.Contains(out.String(), ",skewed") || strings.Contains(out.String(), "+20.00s") {
		t.Fatalf("a replayed renewal was judged as seen live, its holder skewed:\n%s", out.String())
	}
	// Past the replay, the same renewal is live: its holder is 20 s ahead, beyond the 3.75 s
	// a 15 s lease tolerates.
	now.Add(int64(2 * time.Second))
	at = time.Unix(0, now.Load())
	live := lease("apps", "orders", "orders-7f9c-x2", t0.Sub(at.Add(20*time.Second)), 15, 1)
	live.ResourceVersion = "9"
	reopened.Modify(live)
	waitFor("the live renewal, skewed", row("orders", "orders-7f9c-x2", "on_time,skewed", "+20.00s"))
}

// A control character in a holder identity is written out: it cannot add a row, move the
// cursor or overwrite what the table says.
func TestHostileHolderCannotForgeARow(t *testing.T) {
	src := fixture(t)
	hostile := lease("apps", "hostile", "a\nfake   Lease   leader-election   x   on_time\x1b[2K\b\u009b", time.Second, 15, 0)
	if _, err := src.clients.List.CoordinationV1().Leases("apps").Create(context.Background(), hostile, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-n", "apps"}, {"describe", "apps/hostile"}} {
		out, _, err := runWith(t, src, args...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsFunc(out, func(r rune) bool { return r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) }) ||
			strings.Contains(out, "\nfake ") || !strings.Contains(out, `a\nfake`) {
			t.Errorf("%v printed a control character or a forged row:\n%q", args, out)
		}
	}
}
