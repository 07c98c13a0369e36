package integration_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	testbrowser "github.com/lease-exporter/lease-exporter/internal/testenv/browser"
)

// hostileHolder tries to run a script wherever it is shown unescaped, then carries 10 KB of
// multi-byte Unicode.
var hostileHolder = `<script>window.pwned=1;document.title="pwned"</script><img src=x onerror="window.pwned=2">` +
	strings.Repeat("ünïcødé✓🔒", 10240/len("ünïcødé✓🔒")+1)

// browser starts headless Chromium (internal/testenv/browser) for one test, at most two
// minutes long.
func browser(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(testbrowser.Start(t, 1400, 800), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// createLease writes a Lease held by holder, renewed at renew, directly through the API.
func createLease(t *testing.T, ns, name, holder string, renew time.Time, seconds int32) {
	t.Helper()
	r := metav1.NewMicroTime(renew)
	_, err := env.Client.CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &r, AcquireTime: &r, LeaseDurationSeconds: ptr.To(seconds)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Lease %s/%s: %v", ns, name, err)
	}
}

// screenshot writes a full-page PNG to the test's temp dir and, when SCREENSHOT_DIR is set
// (how docs/images/ is refreshed), there too.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(png))
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// In headless Chromium, against the real exporter: the list page renders every lock of the
// namespace with the unhealthy one first, its own script sorts the table (so the CSP lets it
// run), ticking "unhealthy only" leaves only unhealthy rows, and a hostile holder identity is
// shown as text without running. Screenshots of the list and of a detail page with a
// failover in its history are written.
func TestStatusPageInBrowser(t *testing.T) {
	ns := newNamespace(t, "browser")
	a := startCandidate(t, ns, "orders-worker", "orders-worker-7d9f-a", true)
	waitLeading(t, a)
	b := startCandidate(t, ns, "orders-worker", "orders-worker-7d9f-b", false)
	time.Sleep(2 * time.Second)
	a.Stop() // a graceful handoff to b
	waitLeading(t, b)
	c := startCandidate(t, ns, "orders-worker", "orders-worker-7d9f-c", true)
	time.Sleep(2 * time.Second)
	b.Stop() // a crash: b does not release, its lease expires, c takes over
	waitLeading(t, c)
	startCandidate(t, ns, "billing-ledger", "billing-ledger-5c6b-0", false)
	createLease(t, ns, "reports-cron", "reports-cron-6f7d-x", time.Now(), 1) // never renewed: expires after 1 s
	createLease(t, ns, "hostile", hostileHolder, time.Now(), 3600)
	// A kubelet gone quiet. The exporter sees a new Lease renew when it arrives, whatever its
	// renewTime says, so the heartbeat lasts 1 s rather than a kubelet's 40: it has expired by the
	// time the page is read.
	lateNode := ns + "-node"
	createLease(t, "kube-node-lease", lateNode, lateNode, time.Now(), 1)
	t.Cleanup(func() {
		_ = env.Client.CoordinationV1().Leases("kube-node-lease").Delete(context.Background(), lateNode, metav1.DeleteOptions{})
	})

	ctx := browser(t)
	list := env.exp.URL() + "/leases?namespace=" + ns
	rows := `Array.from(document.querySelectorAll("#leases tbody tr")).map(r => r.className + ":" + r.dataset.name).join(" ")`
	var got string
	end := time.Now().Add(deadline)
	for {
		if err := chromedp.Do(ctx, chromedp.Navigate(list), chromedp.WaitVisible(chromedp.CSS("#leases"))); err != nil {
			t.Fatal(err)
		}
		got = eval[string](t, ctx, rows)
		if got == "unhealthy:reports-cron healthy:billing-ledger healthy:hostile healthy:orders-worker" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("list page rows %q, want reports-cron unhealthy first, then the three held locks", got)
		}
		time.Sleep(poll)
	}
	checkInert(t, ctx)
	screenshot(t, ctx, "leases-list.png")
	// On a 1366-pixel laptop screen the list fits without scrolling sideways, and no cell
	// wraps: each row is one line high, the 10 KB holder cut short with an ellipsis.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 768), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#leases"))); err != nil {
		t.Fatal(err)
	}
	if fit := eval[string](t, ctx, `(() => {
		const over = document.documentElement.scrollWidth - window.innerWidth;
		const tall = Array.from(document.querySelectorAll("#leases tbody tr")).filter(r => r.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(r.cells[3]).lineHeight)).map(r => r.dataset.name);
		return over > 0 ? "scrolls " + over + " px sideways" : tall.length ? "wrapped rows: " + tall.join(" ") : "fits";
	})()`); fit != "fits" {
		t.Errorf("list at 1366 px: %s", fit)
	}
	// At 200% zoom (half the CSS pixels), the page still does not scroll sideways: a wide
	// table scrolls in its own box.
	checkZoomed(t, ctx, "the list")
	if cell := eval[string](t, ctx, `document.querySelector('tr[data-name="hostile"] td.holder').textContent`); cell != hostileHolder {
		t.Errorf("hostile holder cell shows %d bytes, want the identity's %d as text", len(cell), len(hostileHolder))
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`th[data-col="1"]`))); err != nil {
		t.Fatal(err)
	}
	if dir := eval[string](t, ctx, `document.querySelector('th[data-col="1"]').dataset.dir || ""`); dir != "asc" {
		t.Fatalf("clicking the Name header did not sort (data-dir %q): the page's script did not run", dir)
	}
	if got := eval[string](t, ctx, rows); got != "healthy:billing-ledger healthy:hostile healthy:orders-worker unhealthy:reports-cron" {
		t.Errorf("sorted by name: %q", got)
	}
	// From the keyboard: the Name header, focused, reverses the order on Enter.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`th[data-col="1"]`)), chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `document.querySelector('th[data-col="1"]').getAttribute("aria-sort") + " " + `+rows); got != "descending unhealthy:reports-cron healthy:orders-worker healthy:hostile healthy:billing-ledger" {
		t.Errorf("Enter on the focused Name header: %q, want it sorted descending", got)
	}

	// The node heartbeats are summed up: the expired one listed as such, past its expiry by
	// its renew age less its second, and the histogram counting it.
	if err := chromedp.Do(ctx, chromedp.Navigate(env.exp.URL()+"/leases?namespace=kube-node-lease"), chromedp.WaitVisible(chromedp.CSS("#nodes"))); err != nil {
		t.Fatal(err)
	}
	row := eval[string](t, ctx, `Array.from(document.querySelectorAll("#overdue-nodes tbody tr")).filter(r => r.cells[0].textContent === "`+lateNode+`").map(r => r.cells[2].textContent + " " + r.cells[3].textContent + " " + r.cells[4].textContent).join("")`)
	fields := strings.Fields(row)
	if len(fields) != 3 || fields[0] != "expired" {
		t.Fatalf("overdue node %s: row %q, want expired, its renew age and how long past its expiry", lateNode, row)
	}
	age, err1 := time.ParseDuration(fields[1])
	past, err2 := time.ParseDuration(fields[2])
	if err1 != nil || err2 != nil || age <= time.Second || past != age-time.Second {
		t.Errorf("overdue node %s: renew age %s, past expiry %s; want past expiry by the age less its 1 s lease", lateNode, fields[1], fields[2])
	}
	if n := eval[float64](t, ctx, `Array.from(document.querySelectorAll("#renew-ages g.bucket text.count")).reduce((s, c) => s + +c.textContent, 0)`); n < 1 {
		t.Errorf("the renew-age histogram counts %v heartbeats, want at least the expired one", n)
	}
	screenshot(t, ctx, "leases-nodes.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(list), chromedp.WaitVisible(chromedp.CSS("#leases"))); err != nil {
		t.Fatal(err)
	}

	// Ticking the box submits the form: the page navigates to the filtered list.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#unhealthy"))); err != nil {
		t.Fatalf("ticking unhealthy only: %v", err)
	}
	end = time.Now().Add(30 * time.Second)
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === "complete" && location.search.includes("unhealthy=1") ? `+rows+` : "loading"`))
		if err == nil && got == "unhealthy:reports-cron" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("with unhealthy only ticked, rows %q (err %v), want only unhealthy:reports-cron", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ticked := eval[bool](t, ctx, `document.getElementById("unhealthy").checked && document.querySelector('select[name=namespace]').value === "`+ns+`"`); !ticked {
		t.Error("the filtered page does not keep the namespace and the ticked box")
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(env.exp.URL()+"/leases/"+ns+"/hostile"), chromedp.WaitVisible(chromedp.CSS("#holder"))); err != nil {
		t.Fatal(err)
	}
	checkInert(t, ctx)
	if holder := eval[string](t, ctx, `document.getElementById("holder").textContent`); holder != hostileHolder {
		t.Errorf("hostile holder on the detail page: %d bytes of text, want %d", len(holder), len(hostileHolder))
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(env.exp.URL()+"/leases/"+ns+"/orders-worker"), chromedp.WaitVisible(chromedp.CSS("#history"))); err != nil {
		t.Fatal(err)
	}
	if ended := eval[string](t, ctx, `Array.from(document.querySelectorAll("#history td.ended")).map(c => c.textContent).join(",")`); ended != "holding,expired,released" {
		t.Errorf("detail history endings %q, want holding,expired,released (newest first)", ended)
	}
	// The timeline, as Chromium laid it out: a's tenure, ended by its release, b's, ended by
	// its expiry, then c's, holding, left to right, each drawn with a width and titled with
	// its holder; the time between b's expiry and c's takeover is a titled gap after b's bar.
	bars := eval[string](t, ctx, `Array.from(document.querySelectorAll("#timeline g.tenure")).map(g => {
		const r = g.querySelector("rect").getBBox();
		return [g.dataset.holder, g.dataset.ended || "holding", r.width > 0 ? "drawn" : "empty", g.querySelector("title").textContent.startsWith(g.dataset.holder + " held it for") ? "titled" : "untitled", Math.round(r.x), Math.round(r.x + r.width)].join(" ");
	}).join(", ")`)
	var aX, aEnd, bX, bEnd, cX, cEnd int
	if n, err := fmt.Sscanf(bars, "orders-worker-7d9f-a released drawn titled %d %d, orders-worker-7d9f-b expired drawn titled %d %d, orders-worker-7d9f-c holding drawn titled %d %d",
		&aX, &aEnd, &bX, &bEnd, &cX, &cEnd); n != 6 || err != nil || !(aX < bX && bX < cX) {
		t.Errorf("timeline bars %q, want a's released, b's expired and c's holding tenures, drawn and titled, left to right", bars)
	}
	// c acquires about a retry period after b's lease ran out by its own observation, which
	// the exporter's may trail: the gap is short, possibly none.
	// The bar's end and the gap's start are rounded apart (x + width, and x), so the same
	// coordinate may round to neighbouring pixels: within one pixel is where the bar ends.
	gaps := eval[string](t, ctx, `Array.from(document.querySelectorAll("#timeline rect.gap")).map(g => Math.round(g.getBBox().x) + " " + g.querySelector("title").textContent).join(" | ")`)
	for _, g := range strings.Split(gaps, " | ") {
		if g == "" {
			continue
		}
		var x int
		_, err := fmt.Sscanf(g, "%d leaderless for ", &x)
		if err != nil || !strings.Contains(g, " leaderless for ") || (max(x-aEnd, aEnd-x) > 1 && max(x-bEnd, bEnd-x) > 1) {
			t.Errorf("timeline gap %q: want it titled leaderless, where a's or b's bar ends (x=%d, %d)", g, aEnd, bEnd)
		}
	}
	if desc := eval[string](t, ctx, `document.getElementById("timeline-desc").textContent`); !strings.Contains(desc, "ended: released") || !strings.Contains(desc, "ended: expired") {
		t.Errorf("the timeline's description %q does not say how a's and b's tenures ended", desc)
	}
	screenshot(t, ctx, "leases-detail.png")
	checkZoomed(t, ctx, "the detail page")
	checkDark(t, ctx)
}

// checkDark reloads the page as a browser set to dark mode shows it: a dark background,
// light text, and the timeline's empty axis dark too.
func checkDark(t *testing.T, ctx context.Context) {
	t.Helper()
	dark := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	})
	if err := chromedp.Do(ctx, dark, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("#timeline"))); err != nil {
		t.Fatal(err)
	}
	colours := eval[string](t, ctx, `[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color,
		getComputedStyle(document.querySelector("#timeline .axis")).fill].join(" | ")`)
	if colours != "rgb(18, 18, 18) | rgb(230, 230, 230) | rgb(30, 30, 30)" {
		t.Errorf("in dark mode the page is %q (background | text | timeline axis), want dark, light, dark", colours)
	}
	screenshot(t, ctx, "leases-detail-dark.png")
}

// checkZoomed reloads the page at 200% zoom of a 1366-pixel screen (683 CSS pixels) and
// checks that it does not scroll sideways, then goes back to the test's window size.
func checkZoomed(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(683, 384), chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatal(err)
	}
	if over := eval[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 0 {
		t.Errorf("%s at 200%% zoom scrolls %v px sideways", what, over)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 800), chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatal(err)
	}
}

// checkInert asserts that nothing of the hostile holder ran: no flag set, title untouched,
// no element but the page's own script and no image.
func checkInert(t *testing.T, ctx context.Context) {
	t.Helper()
	state := eval[string](t, ctx, `String(window.pwned) + "|" + document.title + "|" + document.scripts.length + "|" + document.images.length`)
	if parts := strings.Split(state, "|"); parts[0] != "undefined" || strings.Contains(parts[1], "pwned") || parts[2] != "1" || parts[3] != "0" {
		t.Fatalf("hostile holder was not inert: pwned=%s title=%q scripts=%s images=%s", parts[0], parts[1], parts[2], parts[3])
	}
}
