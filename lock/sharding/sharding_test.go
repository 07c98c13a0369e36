package sharding

import "testing"

// TestShardLabelOnlyWhenSplit: a replica labels its own series with its shard only when the
// locks are split across more than one.
func TestShardLabelOnlyWhenSplit(t *testing.T) {
	for _, tc := range []struct {
		shard, total int
		want         string
	}{{0, 0, ""}, {0, 1, ""}, {0, 2, "0"}, {3, 4, "3"}} {
		got := Label(tc.shard, tc.total)
		if got != tc.want {
			t.Errorf("Label(%d, %d) = %q, want %q", tc.shard, tc.total, got, tc.want)
		}
		if l := ConstLabels(got); (len(l) == 0) != (tc.want == "") || l[LabelName] != tc.want {
			t.Errorf("ConstLabels(%q) = %v", got, l)
		}
	}
}
