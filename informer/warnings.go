package informer

import (
	"context"
	"log/slog"
	"sync"

	"k8s.io/client-go/rest"
)

// onceWarnings logs each distinct API server warning once. The API server sends
// "v1 Endpoints is deprecated" with every list and watch of Endpoints, that is every few
// minutes per watched namespace for as long as the exporter runs; once says it all.
type onceWarnings struct {
	logger *slog.Logger
	seen   sync.Map // warning text -> struct{}
}

var _ rest.WarningHandlerWithContext = (*onceWarnings)(nil)

func (w *onceWarnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	if _, dup := w.seen.LoadOrStore(text, struct{}{}); !dup {
		w.logger.Warn("API server warning (logged once)", "warning", text)
	}
}

// withWarnings returns a copy of cfg whose API server warnings go to w.
func withWarnings(cfg *rest.Config, w *onceWarnings) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.WarningHandler, c.WarningHandlerWithContext = nil, w
	return c
}
