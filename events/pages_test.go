package events

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Through a real REST client, pages are read as JSON one Event at a time: every page is
// asked for with its continue token and 500 a page, an Event over maxEventJSON is counted
// oversized without being decoded, the rest reach take, and an API server's 403 stays a
// Forbidden error (the rebuild's log names the missing permission from it).
func TestPagesStreamEachEventAndSkipOversizedUndecoded(t *testing.T) {
	ev := func(name, note string) eventsv1.Event {
		return eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Reason: "LeaderElected",
			Note: note, ReportingController: ReportingController, Regarding: corev1.ObjectReference{Kind: "Lease", Namespace: "ns", Name: "l"}}
	}
	pages := map[string]eventsv1.EventList{
		"": {ListMeta: metav1.ListMeta{Continue: "second"}, Items: []eventsv1.Event{
			ev("a", "first"), ev("huge", strings.Repeat("x", maxEventJSON)), ev("b", "second")}},
		"second": {Items: []eventsv1.Event{ev("c", "third")}},
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		asked = append(asked, r.URL.Path+" limit="+q.Get("limit")+" continue="+q.Get("continue")+" accept="+r.Header.Get("Accept"))
		if r.URL.Path == "/apis/events.k8s.io/v1/namespaces/denied/events" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(apierrors.NewForbidden(eventsv1.Resource("events"), "", nil).ErrStatus)
			return
		}
		list := pages[q.Get("continue")]
		list.Kind, list.APIVersion = "EventList", "events.k8s.io/v1"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/vnd.kubernetes.protobuf"}})
	if err != nil {
		t.Fatal(err)
	}
	page := pagesOf(client)
	var got []string
	oversized := 0
	opts := metav1.ListOptions{Limit: listPage}
	for {
		cont, err := page(t.Context(), "ns", opts, func(e *eventsv1.Event) { got = append(got, e.Name+"="+e.Note) }, &oversized)
		if err != nil {
			t.Fatal(err)
		}
		if cont == "" {
			break
		}
		opts.Continue = cont
	}
	if strings.Join(got, " ") != "a=first b=second c=third" || oversized != 1 {
		t.Errorf("took %v and %d oversized, want a, b and c, and the huge one counted", got, oversized)
	}
	want := []string{
		"/apis/events.k8s.io/v1/namespaces/ns/events limit=500 continue= accept=application/json",
		"/apis/events.k8s.io/v1/namespaces/ns/events limit=500 continue=second accept=application/json",
	}
	if strings.Join(asked, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
	if _, err := page(t.Context(), "denied", metav1.ListOptions{}, func(*eventsv1.Event) {}, &oversized); !apierrors.IsForbidden(err) {
		t.Errorf("a 403 read as %v, want a Forbidden error", err)
	}
}
