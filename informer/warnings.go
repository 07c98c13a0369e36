package informer

import (
	"log/slog"
	"sync"
)

// onceWarnings logs each distinct API server warning once, at info level. client-go's default
// logs a warning on every response that carries it, and the deprecation warning of
// coordination.k8s.io/v1beta1 LeaseCandidates (1.36) comes with every list and every re-opened
// watch: a line every few minutes per scope, for something the operator cannot act on.
type onceWarnings struct {
	logger *slog.Logger
	mu     sync.Mutex
	seen   map[string]bool
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *onceWarnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[text] {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[text] = true
	w.logger.Info("API server warning (logged once)", "warning", text)
}
