package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// esc writes out as \xNN or \uNNNN every character of s that can change how a terminal shows
// the text around it: controls (C0, DEL and C1: a newline, an escape, a CSI), the
// bidirectional controls (an override makes "ab" read "ba", or moves a column) and the line
// and paragraph separators. A holder identity is any string: it can add no row, move no
// cursor, reorder no line.
func esc(s string) string {
	return escWith(s, func(r rune) string { q := strconv.QuoteRune(r); return q[1 : len(q)-1] })
}

// escJSON writes out as \uNNNN what esc does and encoding/json does not (C1, DEL, the
// bidirectional controls): in json.Marshal's output these can only be inside strings, so the
// JSON means the same and a terminal shows it as written.
func escJSON(b []byte) []byte {
	if !bytes.ContainsFunc(b, unsafeRune) { // most documents: no copy
		return b
	}
	return []byte(escWith(string(b), func(r rune) string { return fmt.Sprintf(`\u%04x`, r) }))
}

func escWith(s string, quote func(rune) string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			b.WriteString(quote(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unsafeRune reports whether esc writes r out: a control, a bidirectional control (ALM
// U+061C, LRM and RLM U+200E-U+200F, the embeddings and overrides U+202A-U+202E, the
// isolates U+2066-U+2069) or a line or paragraph separator (U+2028, U+2029).
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r == '\u061c' || r == '\u200e' || r == '\u200f' ||
		r >= '\u2028' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// escValues is the JSON document b with every string through esc: a template (-o jsonpath,
// go-template) prints values bare, where a holder's newline or escape would reach the terminal.
func escValues(b []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return esc(v)
		case map[string]any:
			for k, x := range v {
				v[k] = walk(x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		}
		return v
	}
	return json.Marshal(walk(doc))
}
