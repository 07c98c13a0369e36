package main

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// watchLeases makes src's Lease watches w: every watch the plugin opens gets it.
func watchLeases(src *source, w watch.Interface, err error) {
	src.client.(*fake.Clientset).PrependWatchReactor("leases", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, w, err
	})
}

func bookmark(rv string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
}

func names(locks []*lock.Lease) string {
	var s []string
	for _, l := range locks {
		s = append(s, l.Name())
	}
	return strings.Join(s, ",")
}

// A streamed list arrives in pages of at most the chunk size, ends at the bookmark that
// marks the end of the initial objects, and returns its resource version to watch from.
func TestStreamedListPrintsInPagesAndEndsAtItsBookmark(t *testing.T) {
	src := fixture(t)
	src.noStream, src.chunk = false, 2
	w := watch.NewFakeWithChanSize(10, false)
	watchLeases(src, w, nil)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		w.Add(lease("apps", n, "h", time.Second, 15, 0))
	}
	w.Action(watch.Bookmark, bookmark("42"))
	var pages []string
	rv, err := src.list(context.Background(), lock.KindLease, "apps", "", func(locks []*lock.Lease) error {
		pages = append(pages, names(locks))
		return nil
	})
	if err != nil || rv != "42" || strings.Join(pages, " ") != "a,b c,d e" {
		t.Errorf("rv %q, err %v, pages %q; want 42 and pages a,b c,d e", rv, err, pages)
	}
}

// Where the API server refuses the streaming list, or takes the watch and sends nothing, the
// plugin pages instead and lists the same locks; a stream that stops after its first
// objects fails instead (paging then would print them twice).
func TestStreamedListFallsBackToPagesOrFailsWhenItStalls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  []*coordinationv1.Lease
		openErr error
		want    string // the pages, or the error's start
	}{
		{"refused", nil, errors.New("sendInitialEvents is forbidden"), "orders,released,skewed"},
		{"silent", nil, nil, "orders,released,skewed"},
		{"stalled", []*coordinationv1.Lease{lease("apps", "a", "h", time.Second, 15, 0)}, nil,
			""}, // checked below: an error, not pages
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fixture(t)
			src.noStream, src.silence = false, 50*time.Millisecond
			w := watch.NewFakeWithChanSize(10, false)
			for _, l := range tc.events {
				w.Add(l)
			}
			watchLeases(src, w, tc.openErr)
			var pages []string
			_, err := src.list(context.Background(), lock.KindLease, "apps", "", func(locks []*lock.Lease) error {
				pages = append(pages, names(locks))
				return nil
			})
			got := strings.Join(pages, " ")
			if err != nil {
				got = explain(err)
			}
			if tc.name == "stalled" {
				if err == nil || !strings.Contains(err.Error(), "stopped sending the streaming list") {
					t.Errorf("a stalled stream: err %v, pages %q", err, pages)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// -w prints a row when a lock changes holder (observed live) and again when it expires with
// no write, judged by the clock moving on, and when it is deleted; Ctrl-C ends it without an
// error.
func TestWatchPrintsAHolderChangeAndAnExpiryWithoutAWrite(t *testing.T) {
	src := fixture(t)
	var now atomic.Int64
	now.Store(t0.UnixNano())
	src.clock.local = func() time.Time { return time.Unix(0, now.Load()) }
	w := watch.NewFakeWithChanSize(10, false)
	watchLeases(src, w, nil)
	var out, errb syncbuffer.Buffer
	cmd := newRootCommandWith(genericiooptions.IOStreams{Out: &out, ErrOut: &errb}, func(*options) (*source, error) { return src, nil })
	cmd.SetArgs([]string{"-n", "apps", "-w"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !ok(out.String()); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("never printed %s:\n%s", what, out.String())
			}
		}
	}
	row := func(name, holder, state string) func(string) bool {
		return func(s string) bool {
			for line := range strings.Lines(s) {
				if f := strings.Fields(line); len(f) > 4 && f[0] == name && f[3] == holder && f[4] == state {
					return true
				}
			}
			return false
		}
	}
	waitFor("the list", row("orders", "orders-7f9c-x2", "expired"))
	// orders-new takes the lock, its clock 2 s behind (within the 3.75 s a 15 s lease
	// tolerates): held, judged from when the watch saw the write.
	taken := lease("apps", "orders", "orders-new", 2*time.Second, 15, 2)
	taken.ResourceVersion = "8"
	w.Modify(taken)
	waitFor("the new holder on time", row("orders", "orders-new", "on_time"))
	now.Add(int64(20 * time.Second)) // no renewal for 20 s of a 15 s lease
	waitFor("the expiry", row("orders", "orders-new", "expired"))
	if n := strings.Count(out.String(), "orders-new"); n != 2 {
		t.Errorf("orders-new printed %d times, want 2 (on time, then expired):\n%s", n, out.String())
	}
	w.Delete(lease("apps", "released", "", 30*time.Second, 15, 2))
	waitFor("the deletion", row("released", "<none>", "deleted"))
	cancel()
	if err := <-done; err != nil {
		t.Errorf("interrupted -w returned %v", err)
	}
	if !strings.HasPrefix(out.String(), "NAME ") || strings.Count(out.String(), "NAME ") != 1 {
		t.Errorf("want one header, first:\n%s", out.String())
	}
}

// A control character in a holder identity is written out: it cannot add a row, move the
// cursor or overwrite what the table says.
func TestHostileHolderCannotForgeARow(t *testing.T) {
	src := fixture(t)
	hostile := lease("apps", "hostile", "a\nfake   Lease   leader-election   x   on_time\x1b[2K\b\u009b", time.Second, 15, 0)
	if _, err := src.client.CoordinationV1().Leases("apps").Create(context.Background(), hostile, metav1.CreateOptions{}); err != nil {
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
