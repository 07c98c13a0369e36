package exposition

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// sharedRenders lets gzip scrapes that arrive while one is being rendered wait for that
// render and send the same bytes: two Prometheus replicas scraping at once cost one render
// (at 100k Leases ~0.4 s of CPU each). Only gzip scrapes share, which is every Prometheus
// scrape: the compressed exposition is ~6 MB at 100k Leases where the plain one is ~114 MB,
// too much to hold for a latecomer. A render is never reused once it has finished: every
// scrape that starts later gets values computed after it started.
type sharedRenders struct {
	mu       sync.Mutex
	inFlight map[string]*sharedRender // by Content-Type: scrapes negotiating another format render their own
	joined   atomic.Int64             // scrapes served from another scrape's render (tests read it)
}

type sharedRender struct {
	done chan struct{}
	body []byte // nil if the render failed (panicked)
}

// errRenderFailed is what scrapes that waited get when the render they waited for panicked
// (the scrape that rendered is aborted by net/http, which logs the panic).
var errRenderFailed = errors.New("the metrics render this scrape waited for failed; see the exporter's log")

// gzipWriters are reused: each holds its compression state (~1 MB). They are
// klauspost/compress's gzip, the same format as compress/gzip (client_golang already depends
// on the module), about twice as fast at BestSpeed: at 100k Leases compression is half of a
// gzip scrape's time (docs/benchmarks.md).
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

// do returns the gzipped exposition for contentType: rendered by render, or by the render
// already running for the same content type. It fails when ctx ends while waiting, or with
// errRenderFailed when the render it waited for panicked.
func (s *sharedRenders) do(ctx context.Context, contentType string, render func(io.Writer)) ([]byte, error) {
	s.mu.Lock()
	if r, ok := s.inFlight[contentType]; ok {
		s.mu.Unlock()
		s.joined.Add(1)
		select {
		case <-r.done:
			if r.body == nil {
				return nil, errRenderFailed
			}
			return r.body, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r := &sharedRender{done: make(chan struct{})}
	if s.inFlight == nil {
		s.inFlight = map[string]*sharedRender{}
	}
	s.inFlight[contentType] = r
	s.mu.Unlock()

	defer func() {
		s.mu.Lock()
		delete(s.inFlight, contentType)
		s.mu.Unlock()
		close(r.done)
	}()
	var buf bytes.Buffer
	gz := gzipWriters.Get().(*gzip.Writer)
	gz.Reset(&buf)
	render(gz)
	_ = gz.Close()       // writes to a bytes.Buffer cannot fail
	gz.Reset(io.Discard) // or the pooled writer would keep this body alive
	gzipWriters.Put(gz)
	r.body = buf.Bytes()
	return r.body, nil
}
