package main

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// TestKlogFollowsLatestLogger checks that client-go's klog lines reach the logger built last,
// with the attributes klog adds, and respect its level.
func TestKlogFollowsLatestLogger(t *testing.T) {
	var first, second bytes.Buffer
	newLogger(&first, "info", "json")
	newLogger(&second, "info", "json")
	klog.Background().WithValues("reflector", "leases").Info("from client-go")
	klog.Background().V(4).Info("too verbose")
	if first.Len() != 0 {
		t.Errorf("klog wrote to the earlier logger: %s", first.String())
	}
	out := second.String()
	for _, want := range []string{`"msg":"from client-go"`, `"component":"client-go"`, `"reflector":"leases"`} {
		if !strings.Contains(out, want) {
			t.Errorf("klog output lacks %s: %s", want, out)
		}
	}
	if strings.Contains(out, "too verbose") {
		t.Errorf("V(4) klog line passed an info-level logger: %s", out)
	}
}
