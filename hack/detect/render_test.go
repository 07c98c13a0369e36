package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

const (
	detectionJSON = "../../docs/detection.json"
	detectionDoc  = "../../docs/detection.md"
	detectionSVG  = "../../docs/detection.svg"
)

// The published table and chart are the JSON's, not an earlier run's or a hand edit. The
// JSON is required: without it docs/detection.md would state results nothing backs.
func TestDetectionDocMatchesItsJSON(t *testing.T) {
	const fix = "run `go run ./hack/detect -render` from the repository root"
	r, err := readResults(detectionJSON)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("docs/detection.json is missing: run the benchmark (go run ./hack/detect), then %s", fix)
	}
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(detectionDoc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderDoc(string(doc), r)
	if err != nil {
		t.Fatalf("docs/detection.md: %v", err)
	}
	if string(doc) != want {
		t.Errorf("docs/detection.md's generated table differs from docs/detection.json's: %s", fix)
	}
	svg, err := os.ReadFile(detectionSVG)
	if err != nil {
		t.Fatalf("%v: %s", err, fix)
	}
	if string(svg) != renderChart(r) {
		t.Errorf("docs/detection.svg differs from docs/detection.json's chart: %s", fix)
	}
}

// sample has each kind of cell: a page, a miss, a false page and a fault that did not run.
func sample() *Results {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	falsePage := Notification{At: at, Status: "firing", Alertname: "NoLeaderElected", Set: "self-report"}
	return &Results{
		Commit:     "v1.2.0-3-gabc1234",
		Started:    at,
		Kubernetes: "v1.36.3",
		Settings:   Settings{ScrapeIntervalSeconds: 15, EvaluationIntervalSeconds: 15, GroupWaitSeconds: 10},
		Sets: []RuleSet{
			{ID: "lease-exporter", Title: "lease-exporter"},
			{ID: "self-report", Title: "self-report"},
		},
		Faults: []Fault{
			{ID: "holder-frozen", Title: "Holder frozen", Elector: "client-go", MustPage: true, Ran: true,
				Results: map[string]Outcome{
					"lease-exporter": {Paged: true, Alerts: []string{"LeaseNoLeader"}, PageSeconds: ptr.To(137.4), ResolveSeconds: ptr.To(30.5)},
					"self-report":    {},
				}},
			{ID: "rolling-restart", Title: "Rolling restart", Elector: "kube-scheduler", Ran: true,
				Results: map[string]Outcome{
					"lease-exporter": {Other: []Notification{{Alertname: "LeaseHolderClockSkew", Set: "lease-exporter"}}},
					"self-report":    {Paged: true, Alerts: []string{"NoLeaderElected"}, False: []Notification{falsePage, falsePage}},
				}},
			{ID: "controller-manager-frozen", Title: "Controller manager frozen", Elector: "kube-controller-manager",
				MustPage: true, NotRun: "kube-controller-manager never led"},
		},
		Unattributed: []Notification{falsePage},
	}
}

// row is the cells of the table row whose Fault cell starts with fault.
func row(t *testing.T, table, fault string) []string {
	t.Helper()
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "| "+fault) {
			cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	t.Fatalf("no row for %q in\n%s", fault, table)
	return nil
}

func TestTableCellsSayPagedMissedFalsePageAndNotRun(t *testing.T) {
	table := renderTable(sample())
	if !strings.HasPrefix(table, "| Fault | Elector | Must page | lease-exporter | self-report |\n|---|---|---|---|---|\n") {
		t.Errorf("header:\n%s", table)
	}
	for _, c := range []struct {
		fault string
		want  []string
	}{
		{"Holder frozen", []string{"Holder frozen", "client-go", "yes",
			"**paged** 137 s (LeaseNoLeader) · resolved 31 s", "missed"}},
		{"Rolling restart", []string{"Rolling restart", "kube-scheduler", "no",
			"— (other: ×1 (LeaseHolderClockSkew))", "**false page** ×2 (NoLeaderElected)"}},
		{"Controller manager frozen", []string{"Controller manager frozen *(not run: kube-controller-manager never led)*",
			"kube-controller-manager", "yes", "not run", "not run"}},
	} {
		if got := row(t, table, c.fault); strings.Join(got, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("row %q:\n got %q\nwant %q", c.fault, got, c.want)
		}
	}
}

// A fault that did not run is neither paged nor missed; every false page counts, the
// unattributed ones with their set's; other pages are counted apart.
func TestTableSummaryCountsPagesFalseNotificationsAndMedian(t *testing.T) {
	table := renderTable(sample())
	for _, want := range []string{
		"- **lease-exporter**: paged 1/1 must-page faults, 0 false pages, 1 other pages on must-not-page faults, median time to page 137 s\n",
		"- **self-report**: paged 0/1 must-page faults, 3 false pages, 0 other pages on must-not-page faults, median time to page none\n",
		"group_wait was 10 s",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("no %q in\n%s", want, table)
		}
	}
	if strings.Contains(table, "no known set label") {
		t.Errorf("every unattributed notification names a set, yet:\n%s", table)
	}
}

func TestTableCountsNotificationsWithoutAKnownSet(t *testing.T) {
	r := sample()
	r.Unattributed = append(r.Unattributed, Notification{Alertname: "Watchdog"})
	if table := renderTable(r); !strings.Contains(table, "- 1 more false notifications carried no known set label\n") {
		t.Errorf("the notification without a set is not counted:\n%s", table)
	}
}

func TestTableKeepsAPipeInATitleInsideItsCell(t *testing.T) {
	r := sample()
	r.Faults[0].Title = "API server | etcd partition"
	if cells := row(t, renderTable(r), `API server \| etcd partition`); len(cells) != 5 {
		t.Errorf("%d cells, want 5: %q", len(cells), cells)
	}
}

func TestMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo(t *testing.T) {
	if got := median([]float64{40, 10, 30, 20}); got != 25 {
		t.Errorf("median = %v, want 25", got)
	}
}

// The chart shows must-page faults that ran only: one bar per set that paged, one missed
// marker per set that did not.
func TestChartDrawsABarPerPageAndAMissedMarkerPerMiss(t *testing.T) {
	svg := renderChart(sample())
	if n := strings.Count(svg, `class="bar"`); n != 1 {
		t.Errorf("%d bars, want 1 (lease-exporter on Holder frozen)", n)
	}
	if n := strings.Count(svg, `class="missed"`); n != 1 || !strings.Contains(svg, ">missed</text>") {
		t.Errorf("%d missed markers, want 1 labelled missed (self-report on Holder frozen)", n)
	}
	for _, want := range []string{">Holder frozen (client-go)</text>", ">137 s</text>", ">lease-exporter</text>", ">self-report</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q in the chart", want)
		}
	}
	for _, absent := range []string{"Rolling restart", "Controller manager frozen"} {
		if strings.Contains(svg, absent) {
			t.Errorf("%q is drawn: it must not page or did not run", absent)
		}
	}
	if svg != renderChart(sample()) {
		t.Error("two renderings of the same results differ")
	}
}

// 137.4 s on an axis of 0 to 140 in steps of 20.
func TestChartAxisEndsAtTheFirstTickPastTheSlowestPage(t *testing.T) {
	svg := renderChart(sample())
	for _, want := range []string{">0</text>", ">20</text>", ">140</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no tick %q", want)
		}
	}
	if strings.Contains(svg, ">160</text>") {
		t.Error("the axis runs past 140")
	}
}

func TestRenderDocReplacesOnlyTheGeneratedSection(t *testing.T) {
	doc := "# Detection\n\nProse.\n\n" + beginMarker + "\nstale table\n" + endMarker + "\n\nMore prose.\n"
	got, err := renderDoc(doc, sample())
	if err != nil {
		t.Fatal(err)
	}
	want := "# Detection\n\nProse.\n\n" + beginMarker + "\n\n" + renderTable(sample()) + "\n" + endMarker + "\n\nMore prose.\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if again, _ := renderDoc(got, sample()); again != got {
		t.Error("rendering a rendered document changes it")
	}
}

func TestRenderDocNamesTheMissingMarker(t *testing.T) {
	for name, c := range map[string]struct{ doc, marker string }{
		"no begin":        {"prose\n" + endMarker + "\n", beginMarker},
		"no end":          {beginMarker + "\nprose\n", endMarker},
		"end before":      {endMarker + "\n" + beginMarker + "\n", endMarker},
		"quoted in prose": {"see `" + beginMarker + "`\n" + endMarker + "\n", beginMarker},
	} {
		_, err := renderDoc(c.doc, sample())
		if err == nil || !strings.Contains(err.Error(), c.marker) {
			t.Errorf("%s: error %v, want one naming %q", name, err, c.marker)
		}
	}
}

func TestRenderRewritesTheDocAndWritesTheChart(t *testing.T) {
	dir := t.TempDir()
	jsonPath, docPath, svgPath := filepath.Join(dir, "d.json"), filepath.Join(dir, "d.md"), filepath.Join(dir, "d.svg")
	if err := writeResults(jsonPath, sample()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(docPath, []byte(beginMarker+"\n"+endMarker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := render(jsonPath, docPath, svgPath); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(docPath)
	if !strings.Contains(string(doc), "**paged** 137 s (LeaseNoLeader)") {
		t.Errorf("docs not rewritten:\n%s", doc)
	}
	if svg, _ := os.ReadFile(svgPath); string(svg) != renderChart(sample()) {
		t.Error("the chart written is not the JSON's")
	}
	if err := os.WriteFile(docPath, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := render(jsonPath, docPath, svgPath); err == nil || !strings.Contains(err.Error(), docPath) {
		t.Errorf("a document without markers: %v, want an error naming %s", err, docPath)
	}
}
