package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// newHandler writes to w in tint's format, coloured only on a terminal.
func newHandler(w io.Writer, level slog.Level) slog.Handler {
	f, ok := w.(*os.File)
	color := ok && term.IsTerminal(int(f.Fd()))
	return tint.NewHandler(w, &tint.Options{Level: level, NoColor: !color})
}

// benignRaces demotes to debug the errors client-go's leaderelection logs when the demo's
// candidates merely race each other, which is how leader election works, not a fault: two
// candidates that start together both try to create the Lease (one gets "already exists"),
// two that see it expire both try to take it (one gets a conflict), and on Ctrl-C an elector
// stopped mid-request reports "context canceled". A new user reading the demo's terminal
// should see only what deserves attention.
type benignRaces struct{ slog.Handler }

// benignErrors are the error texts of those races.
var benignErrors = []string{"already exists", "the object has been modified", "context canceled"}

func (h benignRaces) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && isBenign(r) {
		r.Level = slog.LevelDebug
		if !h.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

// Enabled lets errors through to Handle, which decides on their level there.
func (h benignRaces) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.Handler.Enabled(ctx, l)
}

func (h benignRaces) WithAttrs(as []slog.Attr) slog.Handler {
	return benignRaces{h.Handler.WithAttrs(as)}
}

func (h benignRaces) WithGroup(name string) slog.Handler {
	return benignRaces{h.Handler.WithGroup(name)}
}

func isBenign(r slog.Record) bool {
	benign := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			msg := a.Value.String()
			for _, b := range benignErrors {
				benign = benign || strings.Contains(msg, b)
			}
		}
		return !benign
	})
	return benign
}
