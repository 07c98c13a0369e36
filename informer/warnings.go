package informer

import (
	"context"
	"log/slog"
	"sync"

	"k8s.io/client-go/rest"
)

// onceWarnings logs each distinct API server warning once, at info level. client-go's default
// logs a warning on every response that carries it, and deprecation warnings come with every
// list and every re-opened watch: "v1 Endpoints is deprecated" for Endpoints locks,
// "coordination.k8s.io/v1beta1 LeaseCandidate is deprecated" on 1.36. That is a line every few
// minutes per scope, for something the exporter's operator cannot act on; once says it all.
type onceWarnings struct {
	logger *slog.Logger
	seen   sync.Map // warning text -> struct{}
}

var (
	_ rest.WarningHandler            = (*onceWarnings)(nil)
	_ rest.WarningHandlerWithContext = (*onceWarnings)(nil)
)

// HandleWarningHeader implements rest.WarningHandler.
func (w *onceWarnings) HandleWarningHeader(code int, agent, text string) {
	w.HandleWarningHeaderWithContext(context.Background(), code, agent, text)
}

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext. Only code 299
// (a warning of the API server itself) is logged, as client-go's own handlers do.
func (w *onceWarnings) HandleWarningHeaderWithContext(_ context.Context, code int, _, text string) {
	if code != 299 || text == "" {
		return
	}
	if _, dup := w.seen.LoadOrStore(text, struct{}{}); !dup {
		w.logger.Info("API server warning (logged once)", "warning", text)
	}
}

// withWarnings returns a copy of cfg whose API server warnings go to w.
func withWarnings(cfg *rest.Config, w *onceWarnings) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.WarningHandler, c.WarningHandlerWithContext = nil, w
	return c
}
