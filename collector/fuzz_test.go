package collector

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lease-exporter/lease-exporter/informer"
)

// Bits of FuzzCollect's present argument: which optional Lease fields are set. A nil field and
// a zero one are different Leases (a nil renewTime omits three series), so both must be fuzzed.
const (
	hasHolder = 1 << iota
	hasStrategy
	hasPreferred
	hasRenew
	hasAcquire
	hasDuration
	hasTransitions
	hasIdentityLabel
)

// FuzzCollect builds a Lease from fuzzed spec and metadata, runs it through the real informer
// (fake clientset, list, transform into the compact record) and the collector, and checks that
// the exposition is valid: no panic, a pedantic registry accepts it, the text format parses
// back, and the lint passes. Run it with
//
//	go test -run '^$' -fuzz FuzzCollect -fuzztime 20s ./collector/
//
// The seeds in testdata/fuzz/FuzzCollect (extremes: year 1 and 9999, negative and huge
// durations, 253-character names, 10 KB and invalid UTF-8 holders) run with every go test.
func FuzzCollect(f *testing.F) {
	f.Add("team-a", "ctrl", "uid-1", "pod-1_abc", "", "", int64(1795262398), uint32(0), int64(1795262000), int64(1795258800), int32(15), int32(3), uint8(hasHolder|hasRenew|hasAcquire|hasDuration|hasTransitions))
	f.Add("kube-node-lease", "node-1", "", "node-1", "", "", int64(0), uint32(0), int64(0), int64(0), int32(40), int32(0), uint8(hasHolder|hasRenew|hasDuration))
	f.Add("", "", "", "", "", "", int64(0), uint32(0), int64(0), int64(0), int32(0), int32(0), uint8(0))
	f.Fuzz(func(t *testing.T, ns, name, uid, holder, strategy, preferred string,
		renewSec int64, renewNsec uint32, acquireSec, createdSec int64, duration, transitions int32, present uint8) {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: "1",
			CreationTimestamp: metav1.NewTime(time.Unix(createdSec, 0)),
		}}
		s := &l.Spec
		if present&hasHolder != 0 {
			s.HolderIdentity = &holder
		}
		if present&hasStrategy != 0 {
			st := coordinationv1.CoordinatedLeaseStrategy(strategy)
			s.Strategy = &st
		}
		if present&hasPreferred != 0 {
			s.PreferredHolder = &preferred
		}
		if present&hasRenew != 0 {
			r := metav1.NewMicroTime(time.Unix(renewSec, int64(renewNsec%1e9)))
			s.RenewTime = &r
		}
		if present&hasAcquire != 0 {
			a := metav1.NewMicroTime(time.Unix(acquireSec, 0))
			s.AcquireTime = &a
		}
		if present&hasDuration != 0 {
			s.LeaseDurationSeconds = &duration
		}
		if present&hasTransitions != 0 {
			s.LeaseTransitions = &transitions
		}
		if present&hasIdentityLabel != 0 {
			l.Labels = map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver"}
		}
		checkExposition(t, l)
	})
}

// checkExposition runs one Lease through informer and collector and validates the result.
func checkExposition(t *testing.T, l *coordinationv1.Lease) {
	t.Helper()
	// Seeding the tracker directly rather than through Create: the fake's Create would
	// reject nothing the real API server rejects anyway, and this keeps an iteration to a
	// few milliseconds. The informer still lists through the fake client and transforms.
	client := fake.NewSimpleClientset(l)
	reg := prometheus.NewPedanticRegistry()
	v, err := informer.NewForClients(informer.Clients{List: client, Watch: client}, informer.Options{Now: func() time.Time { return scrapeTime }},
		slog.New(slog.NewTextHandler(io.Discard, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer func() { cancel(); v.Shutdown() }()
	v.Start(ctx)
	if err := v.WaitForCacheSync(ctx); err != nil {
		t.Fatalf("informer did not sync: %v", err)
	}
	c := New(v, Settings{Now: func() time.Time { return scrapeTime }, Extended: true, PerLeaseNodeHeartbeats: true}) // every family
	reg.MustRegister(c)

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var text bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
			t.Fatalf("encode %s: %v", mf.GetName(), err)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(bytes.NewReader(text.Bytes()))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, clip(text.String()))
	}
	checkLeaseSeries(t, l, parsed)

	// The fast text writer serves text scrapes; it copies label bytes itself, so it is
	// checked on its own: it must parse and agree with client_golang.
	var fast bytes.Buffer
	if err := NewTextWriter(v, Settings{Now: func() time.Time { return scrapeTime }, Extended: true, PerLeaseNodeHeartbeats: true}).Write(&fast, nil); err != nil {
		t.Fatalf("text writer: %v", err)
	}
	fastParsed, err := parser.TextToMetricFamilies(bytes.NewReader(fast.Bytes()))
	if err != nil {
		t.Fatalf("fast text exposition does not parse: %v\n%s", err, clip(fast.String()))
	}
	checkLeaseSeries(t, l, fastParsed)

	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

// checkLeaseSeries checks the invariants of the contract that hold for any input: exactly one
// lease_info and one lease_held, held is 0 or 1, and a Lease without holder is never held.
func checkLeaseSeries(t *testing.T, l *coordinationv1.Lease, fams map[string]*dto.MetricFamily) {
	t.Helper()
	info, held := fams["lease_info"].GetMetric(), fams["lease_held"].GetMetric()
	if len(info) != 1 || len(held) != 1 {
		t.Fatalf("want exactly one lease_info and one lease_held, got %d and %d", len(info), len(held))
	}
	holder := label(info[0], "holder")
	if !utf8.ValidString(holder) {
		t.Fatalf("holder label is not valid UTF-8: %q", holder)
	}
	if want := strings.ToValidUTF8(deref(l.Spec.HolderIdentity), string(utf8.RuneError)); holder != want {
		t.Fatalf("holder label %q, want %q", clip(holder), clip(want))
	}
	switch v := held[0].GetGauge().GetValue(); {
	case v != 0 && v != 1:
		t.Fatalf("lease_held = %v", v)
	case v == 1 && holder == "":
		t.Fatal("a Lease without holder is exported as held")
	}
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// clip keeps failure messages readable when the fuzzer found a 10 KB holder.
func clip(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%s... (%d bytes)", s[:300], len(s))
	}
	return s
}
