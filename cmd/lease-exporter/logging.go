package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
	"k8s.io/klog/v2"
)

// newLogger builds the one logger of the process and routes client-go's klog into it, so
// reflector and client messages share the format, level and destination.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level)) // validated by options.Validate
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})
	} else {
		h = tint.NewHandler(w, &tint.Options{Level: lvl, NoColor: !isTerminal(w)})
	}
	logger := slog.New(h)
	routeKlog(logger.With("component", "client-go").Handler())
	return logger
}

// klog is process-global and client-go goroutines read it at any time, so it is set exactly
// once, to a handler that forwards to whichever logger newLogger built last. (Setting it on
// every newLogger call races with informers still running from an earlier call in tests.)
var (
	klogOnce    sync.Once
	klogForward = &forwardHandler{target: new(atomic.Pointer[slog.Handler])}
)

func routeKlog(h slog.Handler) {
	klogForward.target.Store(&h)
	klogOnce.Do(func() { klog.SetSlogLogger(slog.New(klogForward)) })
}

// forwardHandler is a slog.Handler whose destination can be swapped while in use.
type forwardHandler struct {
	target *atomic.Pointer[slog.Handler]
	with   func(slog.Handler) slog.Handler // attributes and groups added by WithAttrs/WithGroup
}

func (f *forwardHandler) current() slog.Handler {
	h := *f.target.Load()
	if f.with != nil {
		h = f.with(h)
	}
	return h
}

func (f *forwardHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return f.current().Enabled(ctx, l)
}

func (f *forwardHandler) Handle(ctx context.Context, r slog.Record) error {
	return f.current().Handle(ctx, r)
}

func (f *forwardHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return f.derive(func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) })
}

func (f *forwardHandler) WithGroup(name string) slog.Handler {
	return f.derive(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (f *forwardHandler) derive(step func(slog.Handler) slog.Handler) slog.Handler {
	prev := f.with
	return &forwardHandler{target: f.target, with: func(h slog.Handler) slog.Handler {
		if prev != nil {
			h = prev(h)
		}
		return step(h)
	}}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
