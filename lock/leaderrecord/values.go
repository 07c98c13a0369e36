package leaderrecord

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// holder decodes a holder identity: a string, or null for none. encoding/json silently turns
// invalid UTF-8 and lone surrogates into U+FFFD; they make a bad holder (which keeps the
// U+FFFD), as does a holder longer than maxHolderBytes (cut on a rune boundary).
func holder(v json.RawMessage) (string, bool) {
	switch v[0] {
	case 'n':
		return "", true
	case '"':
	default:
		return "", false
	}
	s, ok := unquote(v), true
	if strings.ContainsRune(s, utf8.RuneError) {
		ok = utf8.Valid(v) && !loneSurrogate(v)
	}
	if len(s) > maxHolderBytes {
		// encoding/json made s valid UTF-8, so the cut can only split the last rune.
		s, ok = s[:maxHolderBytes], false
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s, ok
}

// integer reads a whole number in [lo, MaxInt32], written as a JSON number (client-go) or as
// a decimal string (the Python client writes str(lease_duration), "15", or "15.0" for a float).
// null is absent; present reports whether there was a value at all.
func integer(v json.RawMessage, lo int64) (n int64, present, ok bool) {
	var tok string
	switch c := v[0]; {
	case c == 'n':
		return 0, false, true
	case c == '-' || c >= '0' && c <= '9':
		tok = string(v)
	case c == '"':
		tok = unquote(v)
	default:
		return 0, true, false
	}
	n, ok = parseWhole(tok)
	if !ok || n < lo || n > math.MaxInt32 {
		return 0, true, false
	}
	return n, true, true
}

// recordTime reads a timestamp string; null and "" are absent, as both clients treat them.
func recordTime(v json.RawMessage) (us int64, present, ok bool) {
	switch v[0] {
	case 'n':
		return 0, false, true
	case '"':
	default:
		return 0, true, false
	}
	s := unquote(v)
	if s == "" {
		return 0, false, true
	}
	if us, ok = parseRecordTime(s); !ok {
		return 0, true, false
	}
	return us, true, true
}

// unquote decodes v, a JSON string that the Decoder has checked, so it cannot fail.
func unquote(v json.RawMessage) string {
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// loneSurrogate reports whether the JSON string v escapes half of a UTF-16 surrogate pair
// ("\ud800" without its low half), which encoding/json decodes to U+FFFD.
func loneSurrogate(v json.RawMessage) bool {
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			continue
		}
		if i++; v[i] != 'u' {
			continue
		}
		r := hexRune(v[i+1 : i+5])
		if i += 4; !utf16.IsSurrogate(r) {
			continue
		}
		if i+6 < len(v) && v[i+1] == '\\' && v[i+2] == 'u' && utf16.DecodeRune(r, hexRune(v[i+3:i+7])) != utf8.RuneError {
			i += 6
			continue
		}
		return true
	}
	return false
}

// hexRune decodes the four hex digits of a \u escape.
func hexRune(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

// parseWhole parses an integral JSON number ("15", "15.0", "1.5e1"); a decimal string is held
// to the same grammar, so hex, underscores and spaces are rejected.
func parseWhole(tok string) (int64, bool) {
	if d := strings.TrimPrefix(tok, "-"); len(d) > 0 && len(d) <= 18 {
		var n int64
		for i := range len(d) {
			if d[i] < '0' || d[i] > '9' {
				n = -1
				break
			}
			n = n*10 + int64(d[i]-'0')
		}
		if n >= 0 {
			if len(d) < len(tok) {
				n = -n
			}
			return n, true
		}
	}
	if !isNumber(tok) {
		return 0, false
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
}

// isNumber reports whether tok is exactly one JSON number: a valid JSON value that begins with
// '-' or a digit and ends with a digit (so no whitespace around it) can only be one.
func isNumber(tok string) bool {
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	return tok != "" && (tok[0] == '-' || digit(tok[0])) && digit(tok[len(tok)-1]) && json.Valid([]byte(tok))
}

// Times outside [1970, 3000) are nonsense from a broken clock or a zero value (year 1 is
// Go's zero time, 9999 a "never" sentinel); the metrics would be nonsense too.
const maxRecordTime = 32503680000 * 1e6 // 3000-01-01T00:00:00Z in Unix µs

// parseRecordTime parses RFC 3339 (metav1.Time, any offset, any fraction) and Python's
// str(datetime) ("2026-11-23 05:15:06.715991", fraction omitted when zero, no zone: UTC; an
// aware datetime adds "+00:00"), returning Unix µs. Fractions beyond µs are truncated.
func parseRecordTime(s string) (int64, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	switch s[10] {
	case 'T', 't', ' ':
	default:
		return 0, false
	}
	year, mon, day := num(s[0:4]), num(s[5:7]), num(s[8:10])
	hour, minute, sec := num(s[11:13]), num(s[14:16]), num(s[17:19])
	if year < 0 || mon < 1 || mon > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	if day > time.Date(year, time.Month(mon)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return 0, false
	}
	rest, usec := s[19:], 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			if n <= 6 {
				usec = usec*10 + int(rest[n]-'0')
			}
			n++
		}
		if n == 1 {
			return 0, false
		}
		for k := n; k <= 6; k++ {
			usec *= 10
		}
		rest = rest[n:]
	}
	offset := 0
	switch {
	case rest == "" || rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, om := num(rest[1:3]), num(rest[4:6])
		if oh < 0 || oh > 23 || om < 0 || om > 59 {
			return 0, false
		}
		if offset = oh*3600 + om*60; rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	secs := time.Date(year, time.Month(mon), day, hour, minute, sec, 0, time.UTC).Unix() - int64(offset)
	us := secs*1e6 + int64(usec)
	return us, us >= 0 && us < maxRecordTime
}

// num parses a fixed-width run of decimal digits, -1 if it is not one.
func num(s string) int {
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}
