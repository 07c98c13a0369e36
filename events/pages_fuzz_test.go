package events

import (
	"bytes"
	"encoding/json"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzDecodePage: an Event list of any notes and continue token reads back through
// decodePage as the whole page decoded at once reads, each Event whole or, past maxEventJSON, counted oversized and
// never handed on; and any bytes at all, a page cut short or hostile, give an error or Events,
// never a panic.
func FuzzDecodePage(f *testing.F) {
	f.Add("Leader changed from \"a\" to \"b\".", "tok", []byte(`{"kind":"EventList","items":[{}]}`))
	f.Add("", "", []byte(`{"items":[`))
	f.Fuzz(func(t *testing.T, note, cont string, junk []byte) {
		_, _ = decodePage(bytes.NewReader(junk), func(*eventsv1.Event) {}, new(int))

		list := eventsv1.EventList{ListMeta: metav1.ListMeta{Continue: cont}, Items: []eventsv1.Event{
			{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Note: note},
			{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Note: note + note},
		}}
		b, err := json.Marshal(list)
		if err != nil {
			t.Skip() // not JSON-encodable (invalid UTF-8 is replaced, so this is rare)
		}
		var got []eventsv1.Event
		oversized := 0
		gotCont, err := decodePage(bytes.NewReader(b), func(e *eventsv1.Event) { got = append(got, *e) }, &oversized)
		if err != nil {
			t.Fatalf("decodePage of an encoded list: %v", err)
		}
		// The oracle: the same page decoded whole, as List would (invalid UTF-8 comes back
		// replaced in both).
		var whole eventsv1.EventList
		if err := json.Unmarshal(b, &whole); err != nil {
			t.Fatal(err)
		}
		if gotCont != whole.Continue {
			t.Errorf("continue %q, want %q", gotCont, whole.Continue)
		}
		var want []string
		wantOversized := 0
		for i, ev := range whole.Items {
			raw, _ := json.Marshal(list.Items[i]) // the bytes the page holds for it
			if len(raw) > maxEventJSON {
				wantOversized++
				continue
			}
			want = append(want, ev.Name+"\x00"+ev.Note)
		}
		var names []string
		for _, ev := range got {
			names = append(names, ev.Name+"\x00"+ev.Note)
		}
		if len(names) != len(want) || oversized != wantOversized {
			t.Fatalf("read %d Events and %d oversized, want %d and %d", len(names), oversized, len(want), wantOversized)
		}
		for i := range want {
			if names[i] != want[i] {
				t.Errorf("Event %d read back as %q, want %q", i, names[i], want[i])
			}
		}
	})
}
