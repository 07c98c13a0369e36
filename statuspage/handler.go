// Package statuspage serves the exporter's lease status pages and their JSON API: every
// lock as the exporter judges it, and each lock's recent election history (lock.History).
// The pages are server-rendered by html/template, which escapes every holder identity; they
// load nothing from elsewhere and run one inline script, allowed by a Content-Security-Policy
// hash, that only sorts the table and submits the filter form.
package statuspage

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

const (
	// Path is the status pages' index, which the landing page links to; the detail pages lie
	// under it.
	Path = "/leases"
	// APIPrefix is the JSON API's; the pages keep all of it, for the API's later versions.
	APIPrefix = "/api/"
)

// Patterns are the routes Handler serves, for the server's mux. A lock is addressed by
// namespace and name; ?kind= (Lease, ConfigMap, Endpoints; default Lease) tells apart locks
// of different kinds with the same namespace and name.
var Patterns = []string{
	"GET " + Path, "GET " + Path + "/{namespace}/{name}",
	"GET " + APIPrefix + "v1/leases", "GET " + APIPrefix + "v1/leases/{namespace}/{name}",
}

// Reserved reports whether another handler at path, on the server's mux, would take routes
// of the pages: Path, anything under it, or under APIPrefix.
func Reserved(path string) bool {
	return path == Path || strings.HasPrefix(path, Path+"/") || strings.HasPrefix(path, APIPrefix)
}

// Handler serves Patterns from the cache.
type Handler struct {
	src    Source
	now    func() time.Time
	logger *slog.Logger
	mux    *http.ServeMux
	// grafana is Grafana's base URL, nil for no links (LinkGrafana).
	grafana *url.URL
	// prefix is the path the pages' links start with (Under).
	prefix string
}

// New returns the handler; now is the clock (nil: time.Now).
func New(src Source, logger *slog.Logger, now func() time.Time) *Handler {
	if now == nil {
		now = time.Now
	}
	h := &Handler{src: src, now: now, logger: logger, mux: http.NewServeMux()}
	h.mux.HandleFunc(Patterns[0], h.listPage)
	h.mux.HandleFunc(Patterns[1], h.detailPage)
	h.mux.HandleFunc(Patterns[2], h.listJSON)
	h.mux.HandleFunc(Patterns[3], h.detailJSON)
	return h
}

// WithRebuilt puts r's tenures, read back from the exporter's Events, before each lock's
// observed history on every page and in the JSON (docs/events.md).
func (h *Handler) WithRebuilt(r Rebuilt) *Handler {
	if r != nil {
		h.src = withRebuilt{h.src, r}
	}
	return h
}

// LinkGrafana makes the pages link to the shipped dashboards in the Grafana at base (an
// absolute URL, validated by the caller): the list to the leases overview, each lock to its
// lease-detail dashboard. "" links to none.
// A query on base, say ?var-cluster=prod&orgId=2 in multi-cluster mode, is kept on every
// link.
func (h *Handler) LinkGrafana(base string) *Handler {
	u, err := url.Parse(base)
	if base == "" || err != nil {
		h.grafana = nil
		return h
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	h.grafana = u
	return h
}

// grafanaLink is the dashboard at path in the configured Grafana with vars (name, value
// pairs) added to the configured query; "" without a Grafana.
func (h *Handler) grafanaLink(path string, vars ...string) string {
	if h.grafana == nil {
		return ""
	}
	u := *h.grafana
	u.Path += path
	q := u.Query()
	for i := 0; i+1 < len(vars); i += 2 {
		q.Set(vars[i], vars[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Under makes the pages' links point under prefix ("/lease-exporter"; "" for the root):
// where --web.external-url says people reach the exporter.
func (h *Handler) Under(prefix string) *Handler {
	h.prefix = prefix
	return h
}

// The shipped dashboards' paths (their uids are fixed in dashboards/).
const (
	grafanaOverview = "/d/lease-exporter-overview/leases-overview"
	grafanaDetail   = "/d/lease-exporter-lease-detail/lease-detail"
)

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func filterOf(r *http.Request) Filter {
	q := r.URL.Query()
	u := strings.ToLower(q.Get("unhealthy"))
	return Filter{Namespace: q.Get("namespace"), Class: q.Get("class"), Kind: q.Get("kind"),
		UnhealthyOnly: u == "1" || u == "true" || u == "on"}
}

// kindOf is the ?kind= of a detail route, lock.DefaultKind's by default.
func kindOf(r *http.Request) string {
	if k := r.URL.Query().Get("kind"); k != "" {
		return k
	}
	return lock.DefaultKind.String()
}

func (h *Handler) listJSON(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, http.StatusOK, list(h.src, h.now(), filterOf(r)))
}

func (h *Handler) detailJSON(w http.ResponseWriter, r *http.Request) {
	d, ok := find(h.src, h.src.JudgedAt(h.now()), r.PathValue("namespace"), r.PathValue("name"), kindOf(r))
	if !ok {
		h.writeJSON(w, http.StatusNotFound, map[string]string{"error": notFound(r)})
		return
	}
	h.writeJSON(w, http.StatusOK, d)
}

func notFound(r *http.Request) string {
	return "no " + kindOf(r) + " lock " + r.PathValue("namespace") + "/" + r.PathValue("name") + " in the exporter's cache, nor deleted recently"
}

// writeJSON writes v; encoding/json escapes <, > and & in strings, so a holder identity
// cannot become markup even where a browser sniffs the answer.
func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		h.logger.Debug("write JSON answer", "err", err)
	}
}

func (h *Handler) listPage(w http.ResponseWriter, r *http.Request) {
	p := listPageOf(h.src, h.now(), filterOf(r))
	p.Grafana = h.grafanaLink(grafanaOverview)
	render(w, h.logger, h.prefix, http.StatusOK, "list", p)
}

func (h *Handler) detailPage(w http.ResponseWriter, r *http.Request) {
	window := r.URL.Query().Get("window")
	span, ok := windowSpan(window)
	if !ok {
		render(w, h.logger, h.prefix, http.StatusBadRequest, "badrequest", fmt.Sprintf("window %q is not one the timeline offers: use one of %s", window, windowNames()))
		return
	}
	at := h.src.JudgedAt(h.now())
	d, ok := find(h.src, at, r.PathValue("namespace"), r.PathValue("name"), kindOf(r))
	if !ok {
		render(w, h.logger, h.prefix, http.StatusNotFound, "notfound", notFound(r))
		return
	}
	p := detailView(d, at, span, window)
	p.Grafana = h.grafanaLink(grafanaDetail, "var-namespace", d.Namespace, "var-lease", d.Name)
	render(w, h.logger, h.prefix, http.StatusOK, "detail", p)
}
