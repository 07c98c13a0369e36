package main

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEscRoundTrip: whatever a holder, a name or an exporter's answer holds, esc prints no
// control, bidi control or line separator, leaves safe text as it is, and says exactly what
// it replaced: reading its escapes back (Go's rune escapes) gives the text it was given.
func FuzzEscRoundTrip(f *testing.F) {
	for _, s := range []string{"orders-0", "a\x1b[2Jb", "\u202eevil\u2066", "x\u2028y\u2029z", "\u0085\u009b", "tab\there", "é漢字"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.Contains(s, `\`) {
			t.Skip() // esc passes invalid bytes and backslashes through as they are
		}
		out := esc(s)
		if strings.ContainsFunc(out, unsafeRune) {
			t.Fatalf("esc(%q) = %q still holds an unsafe rune", s, out)
		}
		if !strings.ContainsFunc(s, unsafeRune) && out != s {
			t.Fatalf("esc(%q) = %q changed safe text", s, out)
		}
		if back := unescape(t, out); back != s {
			t.Fatalf("esc(%q) = %q reads back as %q", s, out, back)
		}
	})
}

// unescape reads esc's output back: a backslash starts one of Go's rune escapes.
func unescape(t *testing.T, s string) string {
	var b strings.Builder
	for s != "" {
		if s[0] != '\\' {
			r, n := utf8.DecodeRuneInString(s)
			b.WriteRune(r)
			s = s[n:]
			continue
		}
		r, _, tail, err := strconv.UnquoteChar(s, 0)
		if err != nil {
			t.Fatalf("%q: not a Go escape: %v", s, err)
		}
		b.WriteRune(r)
		s = tail
	}
	return b.String()
}
