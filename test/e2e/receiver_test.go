package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// webhookAlert is one alert of an Alertmanager webhook notification (payload version 4).
type webhookAlert struct {
	Status      string            `json:"status"` // firing or resolved, per alert
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
}

// notification is one webhook call as received.
type notification struct {
	At     time.Time
	Alerts []webhookAlert
	Raw    string
}

// receiver is the webhook Alertmanager delivers to: what the on-call's pager would get.
// It only records; tests look for what they expect in the record.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []notification
}

func newReceiver() *receiver {
	r := &receiver{}
	// httptest listens on 127.0.0.1 only.
	r.srv = httptest.NewServer(http.HandlerFunc(r.handle))
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/alerts" }
func (r *receiver) close()      { r.srv.Close() }

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var payload struct {
		Alerts []webhookAlert `json:"alerts"`
	}
	if err := json.Unmarshal(body, &payload); err != nil {
		// Alertmanager retries failed deliveries; a 400 shows up in its log.
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.got = append(r.got, notification{At: time.Now(), Alerts: payload.Alerts, Raw: string(body)})
	r.mu.Unlock()
}

// mark returns a position in the record; find and wait with it see only later notifications.
func (r *receiver) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// match selects alerts by status ("" for any) and by a subset of their labels.
type match struct {
	Status string
	Labels map[string]string
}

func (m match) String() string { return fmt.Sprintf("%s alert %v", m.Status, m.Labels) }

func (m match) ok(a webhookAlert) bool {
	if m.Status != "" && a.Status != m.Status {
		return false
	}
	for k, v := range m.Labels {
		if a.Labels[k] != v {
			return false
		}
	}
	return true
}

// find returns the first alert received at or after position since that matches m.
func (r *receiver) find(since int, m match) (webhookAlert, time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.got[min(since, len(r.got)):] {
		for _, a := range n.Alerts {
			if m.ok(a) {
				return a, n.At, true
			}
		}
	}
	return webhookAlert{}, time.Time{}, false
}

// wait polls for an alert matching m received at or after since, and fails t after timeout.
func (r *receiver) wait(t *testing.T, since int, m match, timeout time.Duration) (webhookAlert, time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if a, at, ok := r.find(since, m); ok {
			return a, at
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got no %s within %s", m, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitPage waits for a firing alert with exactly the labels want, received at or after since,
// and fails t if it came sooner than grace after from: the rule's `for` must have held it.
// Exactly: no instance or pod (replicas are aggregated away) and no holder (a churning label
// would restart the `for` clock).
func (r *receiver) waitPage(t *testing.T, since int, want map[string]string, from time.Time, grace, timeout time.Duration) webhookAlert {
	t.Helper()
	a, at := r.wait(t, since, match{"firing", want}, timeout)
	if !maps.Equal(a.Labels, want) {
		t.Errorf("labels = %v, want exactly %v", a.Labels, want)
	}
	if d := at.Sub(from); d < grace {
		t.Errorf("%s paged %s after its condition began, sooner than its %s grace period", want["alertname"], d.Round(time.Second), grace)
	}
	return a
}

// dump renders every notification received, for failure output.
func (r *receiver) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return "(no notifications received)"
	}
	var b strings.Builder
	for i, n := range r.got {
		fmt.Fprintf(&b, "#%d at %s:\n", i, n.At.Format("15:04:05.000"))
		for _, a := range n.Alerts {
			fmt.Fprintf(&b, "  %-8s %v startsAt=%s\n    annotations: %v\n", a.Status, a.Labels, a.StartsAt.Format("15:04:05"), a.Annotations)
		}
	}
	return b.String()
}
