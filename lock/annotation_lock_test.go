package lock

import (
	"slices"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/lockobj"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

var lockMeta = lockobj.AnnotationLock

const clientGoRecord, pythonRecord = lockobj.ClientGoRecord, lockobj.PythonRecord

func TestProjectAnnotationLockFormats(t *testing.T) {
	renew := t0.Add(500 * time.Millisecond).UnixMicro()
	for _, tc := range []struct {
		name, record  string
		kind          Kind
		holder        string
		transitions   int32
		hasTransition bool
	}{
		{"client-go endpoints", clientGoRecord, KindEndpoints, "pod-a_1", 3, true},
		{"python configmap", pythonRecord, KindConfigMap, "py-1", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := ProjectAnnotationLock(&lockMeta("ns", "lock", "u1", "7", tc.record).ObjectMeta, tc.kind)
			if !ok {
				t.Fatal("a lock with the leader annotation was not projected")
			}
			if l.Kind() != tc.kind || l.Class != ClassLeaderElection || l.Namespace() != "ns" || l.Name() != "lock" || l.resourceVersion() != "7" {
				t.Fatalf("kind %s class %s key %s rv %s", l.Kind(), l.Class, l.key, l.resourceVersion())
			}
			if l.Holder != tc.holder || !l.HasDuration || l.DurationSeconds != 15 || !l.HasRenewTime || l.RenewTime != renew ||
				!l.HasAcquireTime || l.AcquireTime != t0.Add(-time.Minute).UnixMicro() ||
				l.HasTransitions != tc.hasTransition || l.Transitions != tc.transitions {
				t.Fatalf("record %+v", l)
			}
			if l.ObservedRenewTime != l.RenewTime || l.rare != nil || l.RecordProblems() != nil {
				t.Fatalf("observed %d, rare %+v", l.ObservedRenewTime, l.rare)
			}
		})
	}
}

// TestProjectAnnotationLockUnheldAndAbsent: the Python client's empty annotation (written
// before the first record) is a lock nobody holds; an object without it is no lock at all.
func TestProjectAnnotationLockUnheldAndAbsent(t *testing.T) {
	l, ok := ProjectAnnotationLock(&lockMeta("ns", "lock", "u1", "1", "").ObjectMeta, KindConfigMap)
	if !ok || l.Holder != "" || l.HasRenewTime || l.HasDuration || l.RecordProblems() != nil || l.Held(t0.UnixMicro()) {
		t.Fatalf("empty annotation: ok=%v record %+v", ok, l)
	}
	if _, ok := ProjectAnnotationLock(&lockMeta("ns", "cm", "u2", "1", "-").ObjectMeta, KindConfigMap); ok {
		t.Fatal("a ConfigMap without the leader annotation was projected as a lock")
	}
}

// TestProjectAnnotationLockKeepsWhatItCanRead: a record with unreadable fields is still a
// lock with the fields that could be read, and remembers which were not.
func TestProjectAnnotationLockKeepsWhatItCanRead(t *testing.T) {
	for _, tc := range []struct {
		record string
		want   []leaderrecord.Problem
		holder string
		dur    bool
	}{
		{`{"holderIdentity":"a","leaseDurationSeconds":"soon"}`, []leaderrecord.Problem{{Field: "leaseDurationSeconds", Reason: leaderrecord.ReasonBadDuration}}, "a", false},
		{`{"holderIdentity":"a","leaseDurationSeconds":15,"renewTime":"yesterday","acquireTime":7}`,
			[]leaderrecord.Problem{{Field: "acquireTime", Reason: leaderrecord.ReasonBadTime}, {Field: "renewTime", Reason: leaderrecord.ReasonBadTime}}, "a", true},
		{`{"holderIdentity":"a","leaseDurationSeconds":15,`, []leaderrecord.Problem{{Field: "", Reason: leaderrecord.ReasonMalformedJSON}}, "a", true},
		{`{"holderIdentity":42,"leaderTransitions":-1}`, []leaderrecord.Problem{{Field: "holderIdentity", Reason: leaderrecord.ReasonBadHolder}, {Field: "leaderTransitions", Reason: leaderrecord.ReasonBadTransitions}}, "", false},
		{`not json`, []leaderrecord.Problem{{Field: "", Reason: leaderrecord.ReasonMalformedJSON}}, "", false},
	} {
		l, ok := ProjectAnnotationLock(&lockMeta("ns", "lock", "u1", "1", tc.record).ObjectMeta, KindConfigMap)
		if !ok {
			t.Fatalf("%s: not projected", tc.record)
		}
		if got := l.RecordProblems(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: problems %v, want %v", tc.record, got, tc.want)
		}
		if l.Holder != tc.holder || l.HasDuration != tc.dur || l.HasRenewTime {
			t.Errorf("%s: kept holder %q duration %v renew %v", tc.record, l.Holder, l.HasDuration, l.HasRenewTime)
		}
	}
}

func TestKindOfResource(t *testing.T) {
	for _, k := range Kinds {
		if got, ok := KindOfResource(k.Resource()); !ok || got != k {
			t.Errorf("KindOfResource(%q) = %v, %v", k.Resource(), got, ok)
		}
	}
	if _, ok := KindOfResource("configmap"); ok {
		t.Error("a singular resource name was accepted")
	}
}
