package main

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/lock"
)

// streamFlushAfter is how long a partial batch of a streamed list waits for more objects
// before it prints: the first rows show at once, and the rest print in pages.
const streamFlushAfter = 50 * time.Millisecond

// streamSilence is how long a streamed list may send nothing: before its first event the
// plugin pages instead; after, it gives up (paging then would print rows twice).
const streamSilence = 10 * time.Second

// stream lists kind k as a watch that sends the initial objects and then a bookmark marking
// their end (the streaming list, KEP-3157), calling page with batches of at most s.chunk
// locks. streamed is false, with no error, when the API server does not stream lists and
// nothing was delivered: the caller pages instead.
func (s *source) stream(ctx context.Context, k lock.Kind, ns, selector string, page func([]*lock.Lease) error) (rv string, streamed bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.watch(ctx, k, ns, metav1.ListOptions{LabelSelector: selector, SendInitialEvents: ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		// Not served (an API server without streaming lists refuses sendInitialEvents), or
		// not allowed (a user who may list but not watch): page instead, which says what
		// is wrong if listing fails too.
		return "", false, nil
	}
	defer w.Stop()
	var batch []*lock.Lease
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := page(batch)
		batch = nil
		return err
	}
	timer := time.NewTimer(streamFlushAfter)
	defer timer.Stop()
	// A server that took the watch but sends nothing at all does not stream lists (even an
	// empty list ends in its bookmark): page instead. One that stops sending before the
	// bookmark has failed.
	silence := s.silence
	if silence == 0 {
		silence = streamSilence
	}
	silent := time.NewTimer(silence)
	defer silent.Stop()
	seen := false
	for {
		select {
		case <-ctx.Done():
			return "", true, ctx.Err()
		case <-silent.C:
			if !seen {
				return "", false, nil
			}
			return "", true, lockError("list", k, ns, "", errStreamStalled)
		case <-timer.C:
			if err := flush(); err != nil {
				return "", true, err
			}
			timer.Reset(streamFlushAfter)
		case ev, ok := <-w.ResultChan():
			silent.Reset(silence)
			switch {
			case !ok || ev.Type == watch.Error:
				if seen {
					return "", true, lockError("list", k, ns, "", streamError(ev, ok))
				}
				return "", false, nil // not streamed: page instead
			case ev.Type == watch.Bookmark:
				m, err := meta.Accessor(ev.Object)
				if err != nil || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
				return m.GetResourceVersion(), true, flush()
			case ev.Type != watch.Added:
				continue // the initial objects come ADDED; later changes are -w's
			}
			seen = true
			if l, isLock := project(k, ev.Object); isLock {
				batch = append(batch, l)
			}
			if int64(len(batch)) >= s.chunk {
				if err := flush(); err != nil {
					return "", true, err
				}
			}
		}
	}
}

func streamError(ev watch.Event, open bool) error {
	if !open {
		return errStreamClosed
	}
	return apierrors.FromObject(ev.Object)
}

var (
	errStreamClosed  = apierrors.NewInternalError(errors.New("the API server closed the streaming list before its end"))
	errStreamStalled = apierrors.NewInternalError(errors.New("the API server stopped sending the streaming list before its end"))
)
