package node

import "testing"

// TestTableContentKeepsWhatTheNodeDidNotMake: a table is the node's to delete only when,
// its KUBE-* chains gone, nothing but built-in chains without rules is left in it (listings as
// nftables 1.0.6's `nft -j list table` prints them).
func TestTableContentKeepsWhatTheNodeDidNotMake(t *testing.T) {
	const head = `{"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}, {"table": {"family": "ip", "name": "nat", "handle": 1}}`
	const base = `, {"chain": {"family": "ip", "table": "nat", "name": "POSTROUTING", "handle": 1, "type": "nat", "hook": "postrouting", "prio": 100, "policy": "accept"}}`
	for _, c := range []struct{ name, listing, want string }{
		{"empty table", head + `]}`, ""},
		{"built-in chains only", head + base + `]}`, ""},
		{"a regular chain", head + base + `, {"chain": {"family": "ip", "table": "nat", "name": "CNI-abc", "handle": 2}}]}`, "chain CNI-abc"},
		{"a rule in a built-in chain", head + base + `, {"rule": {"family": "ip", "table": "nat", "chain": "POSTROUTING", "handle": 3, "expr": [{"counter": {"packets": 0, "bytes": 0}}]}}]}`, "a rule"},
		{"a set", head + `, {"set": {"family": "ip", "name": "blocked", "table": "nat", "type": "ipv4_addr", "handle": 4}}]}`, "a set"},
	} {
		got, err := tableContent([]byte(c.listing))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: tableContent = %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := tableContent([]byte(`{"nftables": [`)); err == nil {
		t.Error("a truncated listing was read without error")
	}
}
