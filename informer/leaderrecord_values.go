package informer

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// text decodes a string value (which str has checked); ok is false when it was not valid
// Unicode (invalid UTF-8, a lone surrogate), which is then replaced with U+FFFD.
func (v value) text() (string, bool) {
	if !v.esc {
		if utf8.ValidString(v.raw) {
			return v.raw, true
		}
		return strings.ToValidUTF8(v.raw, "\uFFFD"), false
	}
	raw, ok := v.raw, true
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			e := raw[i+1]
			i += 2
			switch e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(raw[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						r2 = hex4(raw[i+2:])
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						ok = false
					} else {
						i += 6
					}
				}
				b = utf8.AppendRune(b, r)
			default: // '"', '\\', '/'
				b = append(b, e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(raw[i:])
			if r == utf8.RuneError && size == 1 {
				ok = false
			}
			b = utf8.AppendRune(b, r)
			i += size
		}
	}
	return string(b), ok
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
	sc := scanner{s: tok}
	if t, ok := sc.number(); !ok || len(t) != len(tok) {
		return 0, false
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
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
