package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzCustomColumnsRoundTrip: whatever a holder writes, -o custom-columns prints it with no
// control, bidi control or line separator, and what it prints reads back (Go's rune escapes)
// as the holder: one line per lock, never a forged row.
func FuzzCustomColumnsRoundTrip(f *testing.F) {
	for _, s := range []string{"orders-0", "a\x1b[2Jb", "\u202eevil\u2066", "x\ny\tz", "\u0085\u009b", "é漢字"} {
		f.Add(s)
	}
	p, ok, err := customColumns("custom-columns=HOLDER:.holder", true)
	if !ok || err != nil {
		f.Fatalf("customColumns: %v, %v", ok, err)
	}
	f.Fuzz(func(t *testing.T, holder string) {
		if !utf8.ValidString(holder) || strings.Contains(holder, `\`) || holder == "" {
			t.Skip() // esc passes invalid bytes and backslashes through; "" prints <none>
		}
		// As listOutput.structured hands the document over: every value escaped.
		raw, _ := json.Marshal(map[string]any{"leases": []map[string]any{{"holder": holder}}})
		doc, err := escValues(raw)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := p.PrintObj(&runtime.Unknown{Raw: escJSON(doc)}, &out); err != nil {
			t.Fatal(err)
		}
		line, ok := strings.CutSuffix(out.String(), "\n")
		if !ok || strings.Contains(line, "\n") || strings.ContainsFunc(line, unsafeRune) {
			t.Fatalf("holder %q printed as %q: want one line with no unsafe rune", holder, out.String())
		}
		if back := unescape(t, strings.TrimRight(line, " ")); back != strings.TrimRight(holder, " ") {
			t.Fatalf("holder %q printed as %q, which reads back as %q", holder, line, back)
		}
	})
}
