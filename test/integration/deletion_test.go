package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deletedLock is the documented JSON of a deleted lock (docs/status-page.md, "Deleted
// locks"), spelled out here so that renaming a field fails this test. encoding/json matches
// the one-word names case-insensitively (name, uid, holder, held); the others are tagged.
type deletedLock struct {
	Name, UID, Holder string
	Held              bool
	SeenLive          bool       `json:"seen_live"`
	DeletedAt         time.Time  `json:"deleted_at"`
	RecreatedAt       *time.Time `json:"recreated_at"`
}

// deletedDetail is what the detail adds for a deleted or recreated lock.
type deletedDetail struct {
	leaseDetail
	UID                 string       `json:"uid"`
	ObservedChanges     uint32       `json:"observed_holder_changes"`
	Deleted             *deletedLock `json:"deleted"`
	PreviousIncarnation *deletedLock `json:"previous_incarnation"`
}

func getJSONAPI(t *testing.T, path string, v any) error {
	t.Helper()
	resp, err := http.Get(env.exp.URL() + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	return json.Unmarshal(body, v)
}

// deletions returns lease_exporter_lock_deletions_total of ns's leader-election locks, and
// whether the series exists.
func deletions(p *leaseProbe) (float64, bool) {
	if p.last == nil {
		return 0, false
	}
	s := p.last.Series("lease_exporter_lock_deletions_total", map[string]string{"namespace": p.ns, "class": "leader-election"})
	if len(s) != 1 {
		return 0, false
	}
	return s[0].Value, true
}

// A held Lease deleted under a real client-go elector: the exporter counts the deletion
// (from a series that was there at 0), keeps the lock on the status page with who held it
// and when it went, and a recreation by another elector (a new UID) is no holder change:
// lease_observed_holder_changes_total stays 0 and the page says "recreated", naming the
// previous incarnation's holder.
func TestDeletedLeaseLeavesTombstone(t *testing.T) {
	ctx := context.Background()
	ns, name := newNamespace(t, "deletion"), "orders-worker"
	p := newProbe(env.exp, ns, name)
	a := startCandidate(t, ns, name, "worker-a", false)
	waitLeading(t, a)
	p.until(t, deadline, poll, "the exporter shows worker-a, and the namespace's deletions at 0", func(m leaseMetrics) error {
		if n, ok := deletions(p); m.holder != "worker-a" || m.v("lease_held") != 1 || !ok || n != 0 {
			return fmt.Errorf("holder %q, held %v, deletions %v (series: %v)", m.holder, m.v("lease_held"), n, ok)
		}
		return nil
	})
	first, err := p.api()
	if err != nil {
		t.Fatal(err)
	}
	// When this test runs first, the shared exporter's watch opened moments ago, and events in
	// its first second count as a replay, not seen live (informer's replayGrace).
	time.Sleep(2 * time.Second)

	// a stops without releasing, so its 4 s lease is still valid when the Lease is deleted,
	// and it does not recreate it.
	a.Stop()
	before := time.Now()
	if err := env.Client.CoordinationV1().Leases(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	p.until(t, deadline, poll, "the deletion is counted and the series are gone", func(m leaseMetrics) error {
		if n, _ := deletions(p); n != 1 || m.series != 0 {
			return fmt.Errorf("deletions %v, %d series of the Lease left", n, m.series)
		}
		return nil
	})
	var d deletedDetail
	if err := getJSONAPI(t, "/api/v1/leases/"+ns+"/"+name, &d); err != nil {
		t.Fatalf("the deleted lock's detail: %v", err)
	}
	gone := d.Deleted
	if gone == nil || gone.Holder != "worker-a" || !gone.Held || !gone.SeenLive || gone.UID != string(first.UID) || gone.RecreatedAt != nil {
		t.Fatalf("deleted lock %+v, want worker-a's, held when deleted, seen live, UID %s", gone, first.UID)
	}
	near(t, "deleted_at", gone.DeletedAt, deleted)
	if gone.DeletedAt.Before(before.Add(-historyTolerance)) {
		t.Errorf("deleted_at %s before the deletion was sent at %s", gone.DeletedAt, before)
	}
	if h := d.History; h == nil || len(h.Tenures) == 0 || h.Tenures[len(h.Tenures)-1].Ended != "deleted" || h.Tenures[len(h.Tenures)-1].Holder != "worker-a" {
		t.Fatalf("deleted lock's history %+v, want worker-a's tenure ended deleted", h)
	}
	var l struct {
		Deleted []deletedLock `json:"deleted"`
	}
	if err := getJSONAPI(t, "/api/v1/leases?namespace="+ns, &l); err != nil || len(l.Deleted) != 1 || l.Deleted[0].Name != name {
		t.Fatalf("deleted locks in the list: %+v (err %v), want %s", l.Deleted, err, name)
	}
	for path, want := range map[string]string{"/leases?namespace=" + ns: "Deleted recently", "/leases/" + ns + "/" + name: `id="deleted"`} {
		if page := getPage(t, path); !strings.Contains(page, want) || !strings.Contains(page, "worker-a") {
			t.Errorf("%s lacks %q or worker-a", path, want)
		}
	}

	b := startCandidate(t, ns, name, "worker-b", true) // recreates the Lease
	waitLeading(t, b)
	p.until(t, deadline, poll, "the recreated Lease is shown with no holder change", func(m leaseMetrics) error {
		if m.holder != "worker-b" || m.v("lease_observed_holder_changes_total") != 0 {
			return fmt.Errorf("holder %q, observed holder changes %v", m.holder, m.v("lease_observed_holder_changes_total"))
		}
		if n, _ := deletions(p); n != 1 {
			return brokenf("deletions %v after the recreation, want still 1", n)
		}
		return nil
	})
	d = deletedDetail{}
	if err := getJSONAPI(t, "/api/v1/leases/"+ns+"/"+name, &d); err != nil {
		t.Fatal(err)
	}
	prev := d.PreviousIncarnation
	if d.Deleted != nil || d.ObservedChanges != 0 || prev == nil || prev.Holder != "worker-a" || prev.UID != string(first.UID) || prev.RecreatedAt == nil || d.UID == prev.UID {
		t.Fatalf("recreated lock %+v with previous incarnation %+v, want worker-b's with worker-a's before it", d, prev)
	}
	if h := d.History; h == nil || len(h.Tenures) != 1 || h.Tenures[0].Holder != "worker-b" {
		t.Errorf("recreated lock's history %+v, want worker-b's tenure only", h)
	}
	if page := getPage(t, "/leases/"+ns+"/"+name); !strings.Contains(page, `id="recreated"`) || !strings.Contains(page, "worker-a") {
		t.Error("the recreated lock's page does not say it was recreated after worker-a's incarnation")
	}
}

func getPage(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(env.exp.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	return string(body)
}
