package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// unsafeRanges are the runes no output may print as they are (a newline only between rows):
// C0 and C1 controls and DEL, the bidirectional controls, the line and paragraph separators.
// Written out here rather than taken from esc, so the test does not grade esc by itself.
var unsafeRanges = [][2]rune{{0x00, 0x1f}, {0x7f, 0x9f}, {0x061c, 0x061c}, {0x200e, 0x200f},
	{0x2028, 0x2029}, {0x202a, 0x202e}, {0x2066, 0x2069}}

// unprintable returns the first rune of s in unsafeRanges other than a newline, or -1.
func unprintable(s string) rune {
	for _, r := range s {
		for _, rg := range unsafeRanges {
			if r >= rg[0] && r <= rg[1] && r != '\n' {
				return r
			}
		}
	}
	return -1
}

func TestEscWritesOutEveryUnsafeRune(t *testing.T) {
	for _, rg := range unsafeRanges {
		for r := rg[0]; r <= rg[1]; r++ {
			if got := esc("a" + string(r) + "b"); unprintable(got) != -1 || got[0] != 'a' || got[len(got)-1] != 'b' || !strings.Contains(got, `\`) || strings.Contains(got, "\n") {
				t.Errorf("esc(a%Ub) = %q", r, got)
			}
		}
	}
	for _, safe := range []string{"sched-a_0c1f", "é日本語", "👩‍💻", `DOMAIN\host`, "עברית", "a b"} {
		if got := esc(safe); got != safe {
			t.Errorf("esc(%q) = %q, want it unchanged", safe, got)
		}
	}
}

// hostile is a holder identity (or any other string a cluster object or an exporter's answer
// holds) made of what could rewrite a terminal's line: a clear-screen, a carriage return and
// a newline, every bidirectional control, both separators, C1's NEL and CSI, DEL, NUL, a tab
// and a byte that is no UTF-8.
const hostile = "evil\x1b[2J\r\n\u202eRTL\u2066iso\u2069\u200e\u200f\u061c\u2028LS\u2029PS\u0085NEL\u009b31m\x7f\x00\tTAB\u202a\u202b\u202c\u202d\u2067\u2068\xffend"

// hostileFixture is the fixture with hostile strings in every field the outputs print: a
// Lease's name, holder, preferred holder, strategy and owner, a LeaseCandidate's name and
// versions, and an overdue node heartbeat's holder.
func hostileFixture(t *testing.T) *source {
	t.Helper()
	src := fixture(t)
	ctx := context.Background()
	leases := src.clients.List.CoordinationV1()
	l := lease("apps", "hostile", hostile, time.Second, 15, 0)
	l.Spec.PreferredHolder = ptr.To("preferred-" + hostile)
	l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("strategy-" + hostile))
	l.OwnerReferences = []metav1.OwnerReference{{Kind: "Kind" + hostile, Name: "owner-" + hostile, APIVersion: "v1", UID: "o"}}
	for _, obj := range []*coordinationv1.Lease{l, lease("apps", "name-"+hostile, "h", time.Second, 15, 0),
		lease("kube-node-lease", "node-hostile", "node-"+hostile, 10*time.Minute, 40, 0)} {
		if _, err := leases.Leases(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cand := &coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "candidate-" + hostile},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "hostile", BinaryVersion: "binary-" + hostile, EmulationVersion: "emulation-" + hostile,
			Strategy: coordinationv1.CoordinatedLeaseStrategy("strategy-" + hostile), RenewTime: &metav1.MicroTime{Time: t0.Add(-time.Minute)}}}
	if _, err := src.clients.List.CoordinationV1beta1().LeaseCandidates("apps").Create(ctx, cand, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return src
}

// Every output escapes every field: the list (with -A, -o wide and the node heartbeats'
// overdue table), -o name, -o jsonpath, go-template and custom-columns, and describe with its candidates and an exporter's history (holder
// and ENDED hostile, one tenure rebuilt). Nothing in unsafeRanges reaches the terminal, and
// the golden shows what a reader sees instead.
func TestHostileFieldsAreEscapedInEveryOutputGolden(t *testing.T) {
	src := hostileFixture(t)
	detail := api.Detail{Lease: api.Lease{Namespace: "apps", Name: "hostile", Kind: "Lease", Class: "leader-election"},
		UID: uidOf(t, src, "apps", "hostile"),
		History: &api.History{Tenures: []api.Tenure{
			{Holder: "before-" + hostile, From: t0.Add(-time.Hour), To: ptr.To(t0.Add(-30 * time.Minute)), Ended: "ended-" + hostile, HeldSeconds: ptr.To(1800.0), Rebuilt: true},
			{Holder: hostile, From: t0.Add(-30 * time.Minute), HeldSeconds: ptr.To(1800.0), SeenLive: true, GapBeforeSeconds: ptr.To(0.5)},
		}}}
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(detail)
	}))
	defer exporter.Close()
	var golden strings.Builder
	for _, args := range [][]string{
		{"-A", "-o", "wide"},
		{"-n", "apps", "-o", "name"},
		{"-n", "apps", "-o", `jsonpath={range .leases[*]}{.holder}{"\n"}{end}`},
		{"-n", "apps", "-o", `go-template={{range .leases}}{{.holder}}{{"\n"}}{{end}}`},
		{"-n", "apps", "-o", "custom-columns=NAME:.name,HOLDER:.holder,OWNER:.owner,STRATEGY:.strategy"},
		{"describe", "apps/hostile", "--exporter", exporter.URL},
	} {
		out, stderr, err := runWith(t, src, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if r := unprintable(out + stderr); r != -1 {
			t.Errorf("%v printed %U as it is:\n%q", args, r, out)
		}
		if !strings.Contains(out, `evil\x1b[2J\r\n\u202eRTL`) {
			t.Errorf("%v does not show the hostile string escaped:\n%s", args, out)
		}
		golden.WriteString("$ kubectl lease " + strings.Join(args, " ") + "\n" + out)
	}
	checkGolden(t, "hostile.golden", strings.ReplaceAll(golden.String(), exporter.URL, "http://exporter"))
}

// -w prints its rows through the same escaping: a holder change to the hostile holder is
// one row, escaped.
func TestWatchEscapesAHostileHolder(t *testing.T) {
	src := fixture(t)
	w := watch.NewFakeWithChanSize(10, false)
	watchLeases(src, w)
	var out, errb syncbuffer.Buffer
	cmd := newRootCommandWith(genericiooptions.IOStreams{Out: &out, ErrOut: &errb}, func(*options) (*source, error) { return src, nil })
	cmd.SetArgs([]string{"-n", "apps", "-w"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	taken := lease("apps", "orders", hostile, time.Second, 15, 2)
	taken.ResourceVersion = "8"
	var printed atomic.Bool
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(out.String(), "orders-7f9c-x2") && !printed.Swap(true) {
			w.Modify(taken)
		}
		if strings.Contains(out.String(), `evil\x1b`) {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("-w returned %v", err)
	}
	if !strings.Contains(out.String(), `evil\x1b[2J\r\n\u202eRTL`) {
		t.Fatalf("-w never printed the hostile holder, escaped:\n%s", out.String())
	}
	if r := unprintable(out.String()); r != -1 {
		t.Errorf("-w printed %U as it is:\n%q", r, out.String())
	}
}

// -o json writes every unsafe rune as a JSON escape, so the terminal shows it written out
// and a script decodes the very holder the Lease has.
func TestJSONEscapesAHostileHolderAndKeepsItsValue(t *testing.T) {
	out, _, err := runWith(t, hostileFixture(t), "-n", "apps", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if r := unprintable(out); r != -1 {
		t.Errorf("-o json printed %U as it is:\n%q", r, out)
	}
	var got listJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := strings.ToValidUTF8(hostile, "\uFFFD")
	for _, l := range got.Leases {
		if l.Name == "hostile" && l.Holder == want {
			return
		}
	}
	t.Errorf("-o json does not decode to the hostile holder %q:\n%s", want, out)
}

// -o yaml and kyaml, converted from -o json's escaped JSON, take a hostile holder (the YAML
// parser refuses a raw C1 control), decode to its value, and write its controls and
// separators escaped, but for kyaml's tab inside a quoted string. The YAML emitters write
// bidirectional controls as they are: use -o json or the table to read such a holder.
func TestYAMLWritesAHostileHolderWithItsControlsEscaped(t *testing.T) {
	for _, format := range []string{"yaml", "kyaml"} {
		out, _, err := runWith(t, hostileFixture(t), "-n", "apps", "-o", format)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out {
			if r != '\n' && !(format == "kyaml" && r == '\t') && (r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029) {
				t.Errorf("-o %s printed %U as it is", format, r)
			}
		}
		var got listJSON
		if err := yaml.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(hostile, "\uFFFD")
		if !slices.ContainsFunc(got.Leases, func(l judged) bool { return l.Name == "hostile" && l.Holder == want }) {
			t.Errorf("-o %s does not decode to the hostile holder %q:\n%s", format, want, out)
		}
	}
}
