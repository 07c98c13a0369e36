package main

import (
	"io"
	"testing"
)

// --lease-candidates is on by default (discovery decides) and false turns discovery off.
func TestLeaseCandidatesFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		off  bool
	}{
		{nil, false},
		{[]string{"--lease-candidates"}, false},
		{[]string{"--lease-candidates=true"}, false},
		{[]string{"--lease-candidates=false"}, true},
	} {
		o, err := parseOptions(tc.args, io.Discard)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if o.derived.informer.NoCandidates != tc.off {
			t.Errorf("%v: informer.Options.NoCandidates = %v, want %v", tc.args, o.derived.informer.NoCandidates, tc.off)
		}
	}
}
