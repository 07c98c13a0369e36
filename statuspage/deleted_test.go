package statuspage

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/fake"
	"github.com/lease-exporter/lease-exporter/lock"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// deletionsView is a view with tombstones, as the informer's Cache has them.
type deletionsView struct {
	view
	tombs []*lock.Tombstone
}

func (v deletionsView) RangeDeleted(fn func(*lock.Tombstone)) {
	for _, t := range v.tombs {
		fn(t)
	}
}

// deletedFixture, judged at 60 s: orders/gone, held by a, deleted live at 45 s; orders/reborn,
// held by a, deleted live at 30 s and recreated at 35 s (a new UID) by b; billing/free,
// released at 20 s and found gone by a relist at 50 s; and the live lock orders/worker.
func deletedFixture(t *testing.T) *Handler {
	t.Helper()
	o := fake.NewObserver(lock.DefaultHistory)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	live := func(ns, name, uid string, rv int, holder string, s, acquired int) *lock.Lease {
		return o.Observe(lease(ns, name, uid, rv, holder, at(s), at(acquired)), at(s), true)
	}
	live("orders", "gone", "u-gone", 1, "a", 40, 40)
	live("orders", "gone", "u-gone", 2, "a", 44, 40)
	gone := o.Delete("orders", "gone", at(45), true)
	live("orders", "reborn", "u-reborn-1", 1, "a", 25, 25)
	died := o.Delete("orders", "reborn", at(30), true)
	reborn := live("orders", "reborn", "u-reborn-2", 1, "b", 35, 35)
	live("billing", "free", "u-free", 1, "f", 10, 10)
	live("billing", "free", "u-free", 2, "", 20, 20)
	free := o.Delete("billing", "free", at(50), false)
	v := deletionsView{view: view{synced: true, leases: []*lock.Lease{election(o, "orders", "worker"), reborn}},
		tombs: []*lock.Tombstone{died, gone, free}}
	return New(v, slog.New(slog.DiscardHandler), func() time.Time { return at(60) })
}

// The list names the locks deleted recently, newest first, each with its last holder, whether
// it was held, how the deletion was seen and when it was recreated; filters apply to them.
func TestListShowsDeletedLocks(t *testing.T) {
	h := deletedFixture(t)
	l := getJSON[api.List](t, h, "/api/v1/leases")
	if got := names(l); strings.Join(got, " ") != "orders/reborn orders/worker" {
		t.Fatalf("live locks %v, want the recreated one and the worker only", got)
	}
	if len(l.Deleted) != 3 {
		t.Fatalf("%d deleted locks, want 3: %+v", len(l.Deleted), l.Deleted)
	}
	free, gone, died := l.Deleted[0], l.Deleted[1], l.Deleted[2]
	if free.Name != "free" || free.Held || free.SeenLive || free.Holder != "" || !free.DeletedAt.Equal(t0.Add(50*time.Second)) ||
		free.LastObservedChange == nil || !free.LastObservedChange.Equal(t0.Add(20*time.Second)) {
		t.Errorf("billing/free %+v, want released, noticed in a relist at 50 s after its change at 20 s", free)
	}
	if gone.Name != "gone" || !gone.Held || !gone.SeenLive || gone.Holder != "a" || gone.RecreatedAt != nil || gone.UID == "" {
		t.Errorf("orders/gone %+v, want held by a, seen live, not recreated", gone)
	}
	if died.Name != "reborn" || died.RecreatedAt == nil || !died.RecreatedAt.Equal(t0.Add(35*time.Second)) || died.History != nil {
		t.Errorf("orders/reborn's first incarnation %+v, want recreated at 35 s, no history in the list", died)
	}
	if l := getJSON[api.List](t, h, "/api/v1/leases?namespace=billing"); len(l.Deleted) != 1 || l.Deleted[0].Name != "free" {
		t.Errorf("filtered by namespace billing: deleted %+v, want billing/free only", l.Deleted)
	}

	if _, page := get(t, h, "/leases"); !strings.Contains(page, "<option>billing</option>") {
		t.Error("the namespace filter does not offer billing, where a lock was deleted")
	}
	resp, page := get(t, h, "/leases?namespace=orders")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "<h2>Deleted recently</h2>") {
		t.Fatalf("list page: %d, no deleted section:\n%s", resp.StatusCode, page)
	}
	section := page[strings.Index(page, `<table id="deleted">`):]
	if strings.Contains(section, "billing") || strings.Index(section, `data-name="gone"`) > strings.Index(section, `data-name="reborn"`) ||
		!strings.Contains(section, `href="/leases/orders/gone"`) || !strings.Contains(section, `<td class="recreated">2026-11-24 03:00:35.000Z</td>`) {
		t.Errorf("deleted section (namespace orders, newest first, linked, recreation shown):\n%s", section)
	}
}

// A deleted lock's detail still answers, from its tombstone: its last state judged when it
// went, its history with the last tenure ended "deleted", and the deletion.
func TestDeletedLockDetail(t *testing.T) {
	h := deletedFixture(t)
	d := getJSON[api.Detail](t, h, "/api/v1/leases/orders/gone")
	if d.Deleted == nil || !d.Deleted.Held || d.Holder != "a" || !d.Held || d.Healthy || d.Problems[0] != problemDeleted {
		t.Fatalf("detail of orders/gone %+v, want its tombstone: held by a when deleted, unhealthy", d)
	}
	if d.History == nil || len(d.History.Tenures) != 1 {
		t.Fatalf("history %+v, want a's tenure", d.History)
	}
	if tn := d.History.Tenures[0]; tn.Holder != "a" || tn.Ended != "deleted" || tn.To == nil || !tn.To.Equal(t0.Add(45*time.Second)) {
		t.Errorf("a's tenure %+v, want ended deleted at 45 s", tn)
	}
	resp, page := get(t, h, "/leases/orders/gone")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="deleted"`) || !strings.Contains(page, `<td class="ended">deleted</td>`) ||
		!strings.Contains(page, "It was held by <span class=\"holder\">a</span> when it went") || !strings.Contains(page, "(15.0s ago)") ||
		!strings.Contains(page, "judged at 2026-11-24T03:00:45Z") {
		t.Errorf("detail page of a deleted lock: %d\n%s", resp.StatusCode, page)
	}
	if d := getJSON[api.Detail](t, h, "/api/v1/leases/billing/free"); d.Deleted == nil || d.Deleted.SeenLive || d.History.Tenures[0].Ended != "released" {
		t.Errorf("detail of billing/free %+v, want the tombstone of a released lock noticed in a relist", d)
	}
	if resp, _ := get(t, h, "/api/v1/leases/orders/never"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a lock never seen: %d, want 404", resp.StatusCode)
	}
}

// A recreated lock is a new object with its own history, no holder change, and says so: the
// previous incarnation, its last holder and when it went.
func TestRecreatedLockDetail(t *testing.T) {
	h := deletedFixture(t)
	d := getJSON[api.Detail](t, h, "/api/v1/leases/orders/reborn")
	if d.Deleted != nil || d.Holder != "b" || d.ObservedHolderChanges != 0 || len(d.History.Tenures) != 1 || d.History.Tenures[0].Holder != "b" {
		t.Fatalf("detail of orders/reborn %+v, want the live incarnation held by b, with b's tenure only", d)
	}
	p := d.PreviousIncarnation
	if p == nil || p.Holder != "a" || !p.Held || p.RecreatedAt == nil || !p.RecreatedAt.Equal(t0.Add(35*time.Second)) || p.UID == d.UID {
		t.Fatalf("previous incarnation %+v, want a's, recreated at 35 s", p)
	}
	if p.History == nil || p.History.Tenures[0].Ended != "deleted" {
		t.Errorf("previous incarnation's history %+v, want a's tenure ended deleted", p.History)
	}
	_, page := get(t, h, "/leases/orders/reborn")
	for _, want := range []string{`id="recreated"`, "which is not a holder change", `<h2 id="previous">Previous incarnation</h2>`, `<table id="previous-history">`} {
		if !strings.Contains(page, want) {
			t.Errorf("detail page of a recreated lock lacks %q:\n%s", want, page)
		}
	}
	if d := getJSON[api.Detail](t, h, "/api/v1/leases/orders/worker"); d.PreviousIncarnation != nil {
		t.Errorf("a lock never deleted has a previous incarnation %+v", d.PreviousIncarnation)
	}
}
