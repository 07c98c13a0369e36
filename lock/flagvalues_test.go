package lock

import (
	"slices"
	"testing"
)

// TestParseKindsReadsEitherCommandsLocks: --locks as users type it to either command: any
// case, spaces, repeats and empty items; an unknown kind or none at all is an error that
// lists the kinds.
func TestParseKindsReadsEitherCommandsLocks(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   []Kind
		err    string
	}{
		{[]string{"leases"}, []Kind{KindLease}, ""},
		{[]string{"Leases"}, []Kind{KindLease}, ""},
		{[]string{" configmaps , LEASES,"}, []Kind{KindConfigMap, KindLease}, ""},
		{[]string{"leases,configmaps", "endpoints", "leases"}, []Kind{KindLease, KindConfigMap, KindEndpoints}, ""},
		{[]string{"leases,configmap"}, nil, `unknown lock kind "configmap": use leases, configmaps or endpoints, comma-separated`},
		{[]string{"secrets"}, nil, `unknown lock kind "secrets": use leases, configmaps or endpoints, comma-separated`},
		{[]string{","}, nil, `name at least one of leases, configmaps or endpoints`},
		{nil, nil, `name at least one of leases, configmaps or endpoints`},
	} {
		got, err := ParseKinds(tc.values)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseKinds(%q) error = %v, want %q", tc.values, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseKinds(%q) = %v, %v; want %v", tc.values, got, err, tc.want)
		}
	}
}

// TestParseClassReadsTheLabelValue: a class as the flags spell it, in any case; an unknown one
// is an error that lists the classes.
func TestParseClassReadsTheLabelValue(t *testing.T) {
	if c, err := ParseClass(" Node-Heartbeat"); err != nil || c != ClassNodeHeartbeat {
		t.Errorf("ParseClass(Node-Heartbeat) = %v, %v", c, err)
	}
	if _, err := ParseClass("nodes"); err == nil || err.Error() != `unknown class "nodes": use leader-election, node-heartbeat or apiserver-identity` {
		t.Errorf("ParseClass(nodes) error = %v", err)
	}
}
