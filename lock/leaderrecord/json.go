package leaderrecord

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// The record is read with encoding/json's streaming Decoder rather than decoded into a map or
// a struct at once: member by member, in order, so that duplicate keys each count (the last
// wins, an unreadable earlier one is still reported), the problems come in the record's
// order, and a truncated record keeps the members before the break.

// maxDepth bounds how deeply a member's value may nest arrays and objects. A record nests
// nothing; deeper input has always been malformed_json, though encoding/json would take it.
const maxDepth = 32

// members calls each for every member of the JSON object s, in order, and reports whether s
// was exactly one well-formed object (surrounded by whitespace at most). At the first syntax
// error it stops, having called each for the members before it.
func members(s string, each func(key string, v json.RawMessage)) bool {
	dec := json.NewDecoder(strings.NewReader(pythonNumbers(s)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		var v json.RawMessage
		if err != nil || !isKey || dec.Decode(&v) != nil || tooDeep(v) {
			return false
		}
		each(key, v)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF // nothing follows the object
}

// tooDeep reports whether v, a valid JSON value, nests deeper than maxDepth.
func tooDeep(v json.RawMessage) bool {
	if v[0] != '[' && v[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber() // no float conversion to fail on 1e999
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('['), json.Delim('{'):
			if depth++; depth > maxDepth {
				return true
			}
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

// pythonNumbers rewrites the bare NaN, Infinity and -Infinity that Python's json.dumps writes
// for float('nan') and the infinities, which encoding/json rejects, into " 0.5 " outside
// strings. The record has always read them as numbers, which no field accepts, so that
// {"leaseDurationSeconds": NaN} is bad_duration, not malformed_json; 0.5 is a number no field
// accepts either. The spaces keep it one token where the constant was one: 1NaN stays
// malformed rather than becoming 10.5.
func pythonNumbers(s string) string {
	if !strings.Contains(s, "NaN") && !strings.Contains(s, "Infinity") {
		return s
	}
	var b strings.Builder
	inString := false
next:
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2]) // an escaped quote does not end the string
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString:
			for _, constant := range [...]string{"NaN", "Infinity", "-Infinity"} {
				if strings.HasPrefix(s[i:], constant) {
					b.WriteString(" 0.5 ")
					i += len(constant) - 1
					continue next
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
