package lock

import (
	"testing"
	"unsafe"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/lockobj"
)

var t0, rawLease = lockobj.T0, lockobj.Lease

func TestProjectDropsUnusedMetadata(t *testing.T) {
	raw := rawLease("u1", "1", "a", t0)
	l := Project(raw)
	if l.Namespace() != "ns" || l.Name() != "l" || l.Holder != "a" || !l.HasRenewTime || l.RenewTime != t0.UnixMicro() ||
		!l.HasDuration || l.DurationSeconds != 15 || l.HasTransitions || l.HasAcquireTime {
		t.Fatalf("bad projection: %+v", l)
	}
	meta := l.GetObjectMeta()
	if meta.GetResourceVersion() != "1" || meta.GetUID() != types.UID(parseUID("u1").String()) || meta.GetName() != "ns/l" || len(meta.GetManagedFields()) != 0 || len(meta.GetLabels()) != 0 {
		t.Fatalf("metadata kept more than the key and versions: %+v", meta)
	}
	if key, _ := cache.MetaNamespaceKeyFunc(l); key != "ns/l" {
		t.Fatalf("store key %q", key)
	}
}

func TestUIDRoundTrip(t *testing.T) {
	const id = "0b5e8a52-4c0e-4f7e-9a55-000000000042"
	if got := parseUID(id).String(); got != id {
		t.Fatalf("parseUID(%s).String() = %s", id, got)
	}
	if parseUID("a") == parseUID("b") {
		t.Fatal("distinct non-UUID UIDs collide")
	}
}

func TestProjectPacksRareFields(t *testing.T) {
	raw := rawLease("u1", "123", "l", t0) // holder equals the name, as for kubelets
	if l := Project(raw); l.resourceVersion() != "123" || l.Strategy() != "" || l.rare != nil || l.Holder != "l" {
		t.Fatalf("common Lease: rv=%q rare=%v holder=%q", l.resourceVersion(), l.rare, l.Holder)
	}
	raw.ResourceVersion = "opaque-rv"
	s, p := coordinationv1.OldestEmulationVersion, "b"
	raw.Spec.Strategy, raw.Spec.PreferredHolder = &s, &p
	l := Project(raw)
	if l.resourceVersion() != "opaque-rv" || l.Strategy() != "OldestEmulationVersion" || l.PreferredHolder() != "b" {
		t.Fatalf("rare fields lost: rv=%q strategy=%q preferred=%q", l.resourceVersion(), l.Strategy(), l.PreferredHolder())
	}
}

func TestSameVersion(t *testing.T) {
	rv := func(v string) *Lease { return Project(rawLease("u1", v, "a", t0)) }
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"12", "12", true}, {"12", "13", false}, {"", "", false}, {"opaque", "opaque", true},
		{"opaque", "12", false}, {"12", "opaque", false}, {"opaque", "other", false},
	} {
		if got := rv(tc.a).sameVersion(rv(tc.b)); got != tc.same {
			t.Errorf("sameVersion(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestParseUIDForms(t *testing.T) {
	for _, bad := range []string{"0b5e8a52-4c0e-4f7e-9a55-00000000004z", "0b5e8a524c0e4f7e9a5500000000004200ab", "x"} {
		if parseUID(types.UID(bad)).String() == bad {
			t.Errorf("%q parsed as a UUID", bad)
		}
		if parseUID(types.UID(bad)) != parseUID(types.UID(bad)) {
			t.Errorf("%q: hashing is not stable", bad)
		}
	}
	if n := testing.AllocsPerRun(100, func() { parseUID("0b5e8a52-4c0e-4f7e-9a55-000000000042") }); n != 0 {
		t.Errorf("parseUID allocates %v times per UUID; it runs for every watch event", n)
	}
}

// The record is 128 bytes, a Go size class: one more byte would cost 16 per Lease (144).
// PlainKey is decided at projection: true for every name the API server accepts, false when
// the namespace or name holds a character the text format escapes.
func TestPlainKeyMarksKeysNeedingNoEscaping(t *testing.T) {
	for _, tc := range []struct {
		ns, name string
		plain    bool
	}{{"ns", "l", true}, {"kube-node-lease", "ip-10-0-0-1.eu-west-1.compute.internal", true},
		{`n"s`, "l", false}, {"ns", `back\slash`, false}, {"ns", "new\nline", false}} {
		raw := rawLease("u1", "1", "a", t0)
		raw.Namespace, raw.Name = tc.ns, tc.name
		if got := Project(raw).PlainKey(); got != tc.plain {
			t.Errorf("PlainKey of %q/%q = %v, want %v", tc.ns, tc.name, got, tc.plain)
		}
	}
}

func TestRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(Lease{}); n != 128 {
		t.Fatalf("Lease record is %d bytes, want 128", n)
	}
}

func TestProjectOwner(t *testing.T) {
	node := rawLease("u1", "1", "l", t0)
	node.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "l"}}
	if l := Project(node); l.rare != nil {
		t.Fatalf("a node Lease owned by its own Node allocated rare fields: %+v", l.rare)
	} else if kind, name := l.Owner(); kind != "Node" || name != "l" {
		t.Fatalf("node Lease owner %s/%s", kind, name)
	}
	ctrl := rawLease("u2", "1", "x", t0)
	ctrl.OwnerReferences = []metav1.OwnerReference{{Kind: "ConfigMap", Name: "first"}, {Kind: "Deployment", Name: "ctrl", Controller: ptr.To(true)}}
	if kind, name := Project(ctrl).Owner(); kind != "Deployment" || name != "ctrl" {
		t.Fatalf("owner %s/%s, want the controller reference Deployment/ctrl", kind, name)
	}
	ctrl.OwnerReferences = ctrl.OwnerReferences[:1]
	if kind, name := Project(ctrl).Owner(); kind != "ConfigMap" || name != "first" {
		t.Fatalf("owner %s/%s, want the first reference without a controller", kind, name)
	}
	if kind, name := Project(rawLease("u3", "1", "x", t0)).Owner(); kind != "" || name != "" {
		t.Fatalf("owner %s/%s of a Lease without owner references", kind, name)
	}
}
