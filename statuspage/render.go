package statuspage

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

//go:embed templates/*.html
var templateFiles embed.FS

// script sorts the list by a column header, clicked or focused and pressed (Enter, Space), and
// submits the filter form when a filter changes; the pages work without it, sorted by
// health, namespace and name.
const script = `document.querySelectorAll("th[data-col]").forEach(function (th) {
  function sort() {
    var col = +th.dataset.col, body = th.closest("table").tBodies[0];
    var dir = th.dataset.dir === "asc" ? -1 : 1;
    document.querySelectorAll("th[data-col]").forEach(function (o) { delete o.dataset.dir; o.setAttribute("aria-sort", "none"); });
    th.dataset.dir = dir === 1 ? "asc" : "desc";
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v, nx = parseFloat(x), ny = parseFloat(y);
      if (!isNaN(nx) && !isNaN(ny)) return dir * (nx - ny);
      return dir * x.localeCompare(y);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  th.addEventListener("click", sort);
  th.addEventListener("keydown", function (e) {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
  });
});
document.querySelectorAll("form.filters select, form.filters input[type=checkbox]").forEach(function (el) {
  el.addEventListener("change", function () { el.form.submit(); });
});`

// contentSecurityPolicy allows the pages nothing but their inline style and script: even a
// holder identity that escaped escaping could not run.
var contentSecurityPolicy = func() string {
	sum := sha256.Sum256([]byte(script))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}()

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"script": func() template.JS { return template.JS(script) },
	// The histogram's bar centre, and the baseline of the count above it.
	"mid":     func(b bucket) float64 { return b.X + b.W/2 },
	"stampOf": func(t *time.Time) string { return stamp(*t) },
	"above":   func(b bucket) float64 { return b.Y - 4 },
}).ParseFS(templateFiles, "templates/*.html"))

// render executes a page into a buffer first, so a template error is a clean 500.
func (h *Handler) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		h.logger.Error("render status page", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	out := buf.Bytes()
	if h.prefix != "" {
		out = underPrefix(out, h.prefix)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// underPrefix moves the page's own links, every href and form action that starts with "/",
// under prefix. Nothing else can match: the escaper writes a quote in any text or attribute
// value as &#34;, so a holder identity cannot spell href="/.
func underPrefix(page []byte, prefix string) []byte {
	page = bytes.ReplaceAll(page, []byte(`href="/`), []byte(`href="`+prefix+`/`))
	return bytes.ReplaceAll(page, []byte(`action="/`), []byte(`action="`+prefix+`/`))
}

// row is one lock in the list page, formatted; the V fields are the sort keys.
// Its fields are its own, not an embedded Lease's: text/template finds a promoted field by a
// reflective search that allocates, which for 2,000 rows was most of the page's time.
type row struct {
	Namespace, Name, Kind, Class, Holder string
	Held, Healthy                        bool
	Problems                             []string
	URL                                  string
	RenewAge, Skew, Duration, Trans      string
	LastChange                           string
	RenewAgeV, SkewV, LastChangeV        float64
	// Strip is the lock's last hour as a small timeline; empty for locks that keep no
	// history.
	Strip template.HTML
}

// maxRows bounds the list page: at 100k Leases a full table would be tens of megabytes that
// no browser shows usefully. Unhealthy rows come first, so they are never the ones cut; the
// JSON API is not bounded. 500 keeps the page within its 50 ms budget at 100k Leases
// (BenchmarkPages): 2,000 rows with their strips took about 110 ms.
const maxRows = 500

type listPage struct {
	List
	Filter              Filter
	Namespaces, Classes []string
	Rows                []row
	Total, Unhealthy    int
	Matching            int // rows matching the filter, before maxRows
	EvaluatedAt         string
	// DeletedRows are the locks deleted recently, newest first (at most
	// informer.MaxTombstones: no bound of their own).
	DeletedRows []deletedRow
	// Nodes sums up the node heartbeats the filter selects; the table lists them only when
	// the class filter is node-heartbeat. Nil when there are none.
	Nodes *nodeSummary
	// Grafana is the leases overview dashboard's URL, "" without --web.grafana-url.
	Grafana string
}

// rowOf formats l for the list page, judged at at.
func rowOf(l Lease, at time.Time) row {
	r := row{Namespace: l.Namespace, Name: l.Name, Kind: l.Kind, Class: l.Class, Holder: l.Holder, Held: l.Held,
		Healthy: l.Healthy, Problems: l.Problems, URL: detailURL(l), RenewAge: seconds(l.RenewAgeSeconds),
		Skew: seconds(l.HolderClockSkewSeconds), RenewAgeV: orInf(l.RenewAgeSeconds), SkewV: orInf(l.HolderClockSkewSeconds)}
	if l.LeaseDurationSeconds != nil {
		r.Duration = fmt.Sprintf("%ds", *l.LeaseDurationSeconds)
	}
	if l.LeaseTransitions != nil {
		r.Trans = fmt.Sprint(*l.LeaseTransitions)
	}
	if l.LastHolderChange != nil {
		r.LastChange = ago(*l.LastHolderChange, at)
		r.LastChangeV = float64(l.LastHolderChange.UnixMilli()) / 1e3
	}
	return r
}

func detailURL(l Lease) string { return lockURL(l.Namespace, l.Name, l.Kind) }

func lockURL(namespace, name, kind string) string {
	u := "/leases/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
	if kind != lock.DefaultKind.String() {
		u += "?kind=" + url.QueryEscape(kind)
	}
	return u
}

type detailPage struct {
	Detail
	EvaluatedAt string
	RenewAge    string
	Skew        string
	Tenures     []tenureRow
	Cadence     string
	// Sparkline draws the renewal intervals against the lease duration.
	Sparkline  template.HTML
	Leaderless string
	// Gone is the deletion of a lock that went; Previous the incarnation before this one of
	// a lock recreated, with its holders.
	Gone, Previous  *deletedRow
	PreviousTenures []tenureRow
	// Timeline draws History; nil for locks that keep none.
	Timeline *timeline
	// Grafana is the lock's lease-detail dashboard URL, "" without --web.grafana-url.
	Grafana string
}

type tenureRow struct {
	Tenure
	From, To, LastRenew, Held, Gap string
}

// detailView formats d, judged at at (informer.JudgedAt), its timeline over the window
// named window, span long.
func detailView(d Detail, at time.Time, span time.Duration, window string) detailPage {
	judged := at
	if d.Deleted != nil {
		judged = d.Deleted.DeletedAt // a tombstone's state is judged when its lock went
	}
	p := detailPage{Detail: d, EvaluatedAt: judged.UTC().Format(time.RFC3339), RenewAge: seconds(d.RenewAgeSeconds),
		Skew: seconds(d.HolderClockSkewSeconds)}
	if d.Deleted != nil {
		p.Gone = ptr(deletedRowOf(*d.Deleted, at))
	}
	if prev := d.PreviousIncarnation; prev != nil {
		p.Previous = ptr(deletedRowOf(*prev, at))
		if prev.History != nil {
			p.PreviousTenures = tenureRows(prev.History.Tenures)
		}
	}
	if d.History == nil {
		return p
	}
	p.Tenures = tenureRows(d.History.Tenures)
	p.Timeline = timelineOf(d.History, judged, span, window, detailURL(d.Lease))
	if n := len(d.History.RenewalIntervalsSeconds); n > 0 {
		iv := slices.Clone(d.History.RenewalIntervalsSeconds)
		slices.Sort(iv)
		p.Cadence = fmt.Sprintf("last %d: min %s, median %s, max %s", n, seconds(&iv[0]), seconds(&iv[n/2]), seconds(&iv[n-1]))
		p.Sparkline = sparkline(d.History.RenewalIntervalsSeconds, d.LeaseDurationSeconds)
	}
	if d.History.LeaderlessSince != nil {
		p.Leaderless = stamp(*d.History.LeaderlessSince)
	}
	return p
}

// tenureRows formats tenures, newest first.
func tenureRows(tenures []Tenure) []tenureRow {
	var rows []tenureRow
	for _, t := range slices.Backward(tenures) {
		r := tenureRow{Tenure: t, From: stamp(t.From), LastRenew: stamp(t.LastRenew), Held: seconds(&t.HeldSeconds),
			Gap: seconds(t.GapBeforeSeconds)}
		if t.To != nil {
			r.To = stamp(*t.To)
		}
		rows = append(rows, r)
	}
	return rows
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000Z") }

func ago(t, now time.Time) string {
	return seconds(ptr(now.Sub(t).Seconds())) + " ago"
}

// seconds formats a duration in seconds the way an on-call engineer reads it; "" for null.
func seconds(s *float64) string {
	if s == nil {
		return ""
	}
	d := time.Duration(*s * float64(time.Second))
	switch abs := max(d, -d); {
	case abs < time.Minute:
		return fmt.Sprintf("%.1fs", math.Round(*s*10)/10+0) // +0: no "-0.0s"
	case abs < time.Hour:
		return d.Round(time.Second).String()
	default:
		return d.Round(time.Minute).String()
	}
}

func orInf(f *float64) float64 {
	if f == nil {
		return 1e18 // sorts last; a string "+Inf" would not parse in the script
	}
	return *f
}
