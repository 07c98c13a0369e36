package statuspage

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net/http"
	"time"
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

// render executes the page name into a buffer first, so a template error is a clean 500;
// prefix moves the page's links under it (Handler.Under).
func render(w http.ResponseWriter, logger *slog.Logger, prefix string, status int, name string, data any) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		logger.Error("render status page", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	out := buf.Bytes()
	if prefix != "" {
		out = underPrefix(out, prefix)
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
