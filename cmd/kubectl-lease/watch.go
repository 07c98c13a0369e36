package main

import (
	"context"
	"sync"
	"time"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// -w is the exporter's informer watching: its reflector resumes and relists, and its stores
// observe every change, live or not by the exporter's replay rule (what a reopened watch
// replays did not happen when it arrives), so a lock is judged by when its record was seen
// to change, and a holder's skew measured only on renewals seen live, as the exporter does.
// A row prints when a lock's holder, standing or skew judgement changes, not on every renewal.

// shownState is what a printed row said, so only a change prints another.
type shownState struct {
	holder, standing string
	skewed, measured bool
}

// rejudgeEvery is how often -w judges every lock again, since a lock expires without a write:
// often enough to show it expired before a successor polling every second takes it; a pass
// over 100k locks takes milliseconds.
const rejudgeEvery = 250 * time.Millisecond

// watchOutput is the informer's Observer for -w: it prints the row a change makes, once the
// list's rows are out (begin), under one lock with the tick's.
type watchOutput struct {
	mu    sync.Mutex
	out   *listOutput
	ready bool
	err   error // the first failed write, which ends -w
}

var _ informer.Observer = (*watchOutput)(nil)

// begin prints the list (print) and lets changes print after it.
func (w *watchOutput) begin(print func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ready = true
	return print()
}

func (w *watchOutput) Observed(t lock.Transition)              { w.show(t.Rec, t.At, false) }
func (w *watchOutput) Gone(last *lock.Lease, at int64, _ bool) { w.show(last, at, true) }

func (w *watchOutput) show(rec *lock.Lease, at int64, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ready && w.err == nil {
		w.err = w.out.show(rec, time.UnixMicro(at), deleted)
	}
}

// watchLocks re-judges every lock of c at each tick until ctx ends, a write fails or the API
// server refuses a watch (failed).
func watchLocks(ctx context.Context, c *informer.Cache, w *watchOutput, failed <-chan error) error {
	tick := time.NewTicker(rejudgeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-failed:
			return err
		case <-tick.C:
		}
		at, _, _ := w.out.clock.now()
		w.mu.Lock()
		c.Range(func(rec *lock.Lease) {
			if w.err == nil {
				w.err = w.out.show(rec, at, false)
			}
		})
		err := w.err
		w.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// show prints rec's row, judged at at, if it says something its last row did not.
func (p *listOutput) show(rec *lock.Lease, at time.Time, deleted bool) error {
	if !p.listed(rec) {
		return nil
	}
	key, j := rec.Ref(), judge(rec, at, false)
	st := stateOf(j, rec)
	if deleted {
		j.Standing = "deleted"
		delete(p.shown, key)
	} else if prev, ok := p.shown[key]; ok && prev == st {
		return nil
	} else {
		p.shown[key] = st
	}
	return p.table.print([][]any{cells(&j, at, p.o.allNamespaces, true)})
}

// listed says whether the list shows rec as a row (not filtered out by --class, nor summed up).
func (p *listOutput) listed(rec *lock.Lease) bool {
	return (p.filter == nil || rec.Class == *p.filter) && (p.summed == nil || rec.Class != *p.summed)
}

func stateOf(j judged, rec *lock.Lease) shownState {
	_, measured := rec.ClockSkew()
	return shownState{holder: j.Holder, standing: j.Standing, skewed: j.skewed(), measured: measured}
}
