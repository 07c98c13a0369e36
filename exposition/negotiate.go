package exposition

import (
	"net/http"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// textFormat returns the text format to serve for a request's headers, false when the client
// refuses text (it then gets whatever client_golang negotiates).
//
// Prometheus lists text/plain in every Accept header it sends, even when it prefers protobuf
// (native histograms). We have no histograms to lose, and at 100k Leases the client_golang
// path takes ~9 s and triples peak memory, so any client that accepts text gets the fast path.
//
// OpenMetrics is never served, on either path, although Prometheus asks for it first.
// Prometheus 2.42 (the Debian build test/e2e runs; captured from its scrapes) sends
//
//	application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1
//
// and Prometheus 3 ranks OpenMetrics 1.0.0 at q=0.5 over text's 0.3. Honouring that would
// take every production scrape off the fast path (to client_golang: the ~9 s above), or give
// the fast writer a second format to keep byte-identical with client_golang's, and these
// series would gain nothing: gauges and counters without exemplars, units or histograms. The
// one addition would be the counters' created timestamps as _created samples, which a
// Prometheus without created-timestamp ingestion (before 2.50, and by default after) stores as
// extra series. A client that accepts only OpenMetrics gets text from client_golang, whose
// handler does not enable OpenMetrics either.
func textFormat(h http.Header) (expfmt.Format, bool) {
	if !acceptsText(h.Get("Accept")) {
		return "", false
	}
	format := expfmt.Negotiate(h)
	if format.FormatType() != expfmt.TypeTextPlain {
		format = expfmt.NewFormat(expfmt.TypeTextPlain).WithEscapingScheme(model.UnderscoreEscaping)
	}
	return format, true
}

// acceptsText reports whether the Accept header allows the text format (or names none).
func acceptsText(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		media, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if media != "text/plain" && media != "*/*" {
			continue
		}
		if q := strings.ReplaceAll(params, " ", ""); strings.Contains(q, "q=0;") || strings.HasSuffix(q, "q=0") ||
			strings.Contains(q, "q=0.0;") || strings.HasSuffix(q, "q=0.0") {
			continue // explicitly refused
		}
		return true
	}
	return false
}
