package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// esc writes out every character of s that can change how a terminal shows the text
// around it, as \xNN or \uNNNN: controls (C0, DEL and C1: a newline, a backspace, an
// escape or a CSI), the bidirectional controls (an override can make "ab" read "ba", or
// move a column), and the line and paragraph separators some terminals and editors break
// lines at. Nothing a cluster object or an exporter's answer holds (a holder identity is any
// string) can then add a row, move the cursor or reorder what a line says.
func esc(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// unsafeRune reports whether esc writes r out: a control, a bidirectional control (ALM
// U+061C, LRM and RLM U+200E-U+200F, the embeddings and overrides U+202A-U+202E, the
// isolates U+2066-U+2069) or a line or paragraph separator (U+2028, U+2029).
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u061c', r == '\u200e', r == '\u200f',
		r >= '\u2028' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// escJSON writes out, as \uNNNN, what esc writes out and encoding/json leaves as it is (C1
// controls, DEL, the bidirectional controls): such a rune can only be inside a string of
// json.Marshal's output, which has no control outside strings, so the JSON means the same
// and a terminal shows it as written.
func escJSON(b []byte) []byte {
	if !bytes.ContainsFunc(b, unsafeRune) {
		return b
	}
	var out bytes.Buffer
	for _, r := range string(b) {
		if unsafeRune(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return out.Bytes()
}

// escValues is the JSON document b with every string in it through esc: a template
// (-o jsonpath, go-template) prints values bare, and a holder's newline or escape sequence
// would otherwise reach the terminal as it is.
func escValues(b []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(escAll(doc))
}

func escAll(v any) any {
	switch v := v.(type) {
	case string:
		return esc(v)
	case map[string]any:
		for k, x := range v {
			v[k] = escAll(x)
		}
	case []any:
		for i, x := range v {
			v[i] = escAll(x)
		}
	}
	return v
}
