package main

import (
	"io"
	"log/slog"
	"os"

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
	klog.SetSlogLogger(logger.With("component", "client-go"))
	return logger
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
