package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Results is one run of the benchmark: docs/detection.json, from which docs/detection.md's
// table and chart are generated (render.go).
type Results struct {
	Commit string `json:"commit"` // git describe of the tree measured
	// Rescored is the commit whose scoring last sorted the recorded pages again (-rescore),
	// when that came after the run.
	Rescored   string    `json:"rescored,omitempty"`
	Started    time.Time `json:"started"`    // when the faults began
	Kubernetes string    `json:"kubernetes"` // the control plane's version
	Settings   Settings  `json:"settings"`
	Sets       []RuleSet `json:"sets"`   // the rule sets, in table order
	Faults     []Fault   `json:"faults"` // in table order
	// Unattributed are notifications whose labels name no fault's namespace: each is a
	// false page too.
	Unattributed []Notification `json:"unattributed"`
	Seconds      float64        `json:"seconds"` // the whole run, set-up included
}

// Settings are the knobs every time in the table depends on.
type Settings struct {
	ScrapeIntervalSeconds     float64 `json:"scrape_interval_seconds"`
	EvaluationIntervalSeconds float64 `json:"evaluation_interval_seconds"`
	GroupWaitSeconds          float64 `json:"group_wait_seconds"` // Alertmanager's
}

// grace is how late a page may come after a repair and still be the fault's: one scrape,
// one evaluation and Alertmanager's group_wait.
func (s Settings) grace() time.Duration {
	return time.Duration((s.ScrapeIntervalSeconds + s.EvaluationIntervalSeconds + s.GroupWaitSeconds) * float64(time.Second))
}

// RuleSet is one of the alerting rule sets loaded side by side; every alert it fires
// carries the label set=<ID>.
type RuleSet struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Fault is one row: what was done, whether it must page, and what each set did.
type Fault struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Elector  string `json:"elector"` // who holds the lock: "client-go", "kube-scheduler", ...
	MustPage bool   `json:"must_page"`
	// Namespace is where its locks live; a page naming it during the fault is the fault's.
	Namespace string `json:"namespace"`
	// Exclusive faults disturb every lock (the API server, the exporter): they ran alone, and
	// every page during one is its own.
	Exclusive bool `json:"exclusive"`
	// Ran is false when the fault's precondition failed (the elector never led); NotRun says
	// why, and the row counts as neither a pass nor a miss.
	Ran    bool   `json:"ran"`
	NotRun string `json:"not_run,omitempty"`
	// LeaseDurationSeconds is the elector's lease duration (0 when there is no lock).
	LeaseDurationSeconds float64    `json:"lease_duration_seconds"`
	FaultAt              time.Time  `json:"fault_at"`
	RepairAt             *time.Time `json:"repair_at"` // nil: the fault was never repaired
	EndAt                time.Time  `json:"end_at"`    // when watching for notifications stopped
	// Results, by rule set ID.
	Results map[string]Outcome `json:"results"`
}

// Outcome is what one rule set did on one fault.
type Outcome struct {
	// Paged: at least one firing notification arrived for the fault's namespace. On a
	// must-not-page row every one of them is in False instead.
	Paged  bool     `json:"paged"`
	Alerts []string `json:"alerts"` // the alertnames that paged, sorted
	// PageSeconds is from the fault to the first firing notification; ResolveSeconds from
	// the repair to the last of those alerts' resolved notifications (nil when it never
	// came, or there was no repair).
	PageSeconds    *float64 `json:"page_seconds"`
	ResolveSeconds *float64 `json:"resolve_seconds"`
	// False are the pages that should not have come: a leadership alert on a must-not-page
	// row (the rows that must not page say so of leadership alerts), or any alert before a
	// must-page row's fault or after its repair (Settings.grace).
	False []Notification `json:"false"`
	// Other are the pages on a must-not-page row of alerts about something besides the
	// election (otherAlerts: a clock, a write rate, the monitoring itself), shown, not counted.
	Other []Notification `json:"other"`
}

// Notification is one alert in one webhook delivery from Alertmanager.
type Notification struct {
	At        time.Time         `json:"at"`
	Status    string            `json:"status"` // firing or resolved
	Alertname string            `json:"alertname"`
	Set       string            `json:"set"`
	Labels    map[string]string `json:"labels"`
}

func readResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

func writeResults(path string, r *Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
