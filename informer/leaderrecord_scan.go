package informer

import "strings"

// A minimal JSON reader for the flat object of a leader record. encoding/json would allocate
// for the byte slice, the reflection and every field; this reads the annotation string in
// place and hands out substrings.

type valueKind uint8

const (
	kindNull valueKind = iota + 1
	kindString
	kindNumber // also Python's NaN, Infinity and -Infinity, which json.dumps writes
	kindBool
	kindComposite // an object or array, skipped
)

// value is one member value: for a string the raw text between the quotes, for a number
// its token.
type value struct {
	kind valueKind
	raw  string
	esc  bool // raw contains backslash escapes
}

// maxDepth bounds the nesting of skipped values; a record has none.
const maxDepth = 32

// scanner reads one JSON object member by member.
type scanner struct {
	s       string
	i       int
	started bool
}

// member returns the next key and value; ok is false at the end of the object, and then
// complete tells whether the whole input was one well-formed object.
func (sc *scanner) member() (key string, v value, ok, complete bool) {
	sc.ws()
	if !sc.started {
		sc.started = true
		if !sc.eat('{') {
			return "", value{}, false, false
		}
		sc.ws()
		if sc.eat('}') {
			return sc.end()
		}
	} else {
		if sc.eat('}') {
			return sc.end()
		}
		if !sc.eat(',') {
			return "", value{}, false, false
		}
		sc.ws()
	}
	if sc.peek() != '"' {
		return "", value{}, false, false
	}
	raw, esc, good := sc.str()
	if !good {
		return "", value{}, false, false
	}
	key = raw
	if esc {
		key, _ = value{kind: kindString, raw: raw, esc: true}.text()
	}
	sc.ws()
	if !sc.eat(':') {
		return "", value{}, false, false
	}
	sc.ws()
	if v, good = sc.value(0); !good {
		return "", value{}, false, false
	}
	return key, v, true, false
}

func (sc *scanner) end() (string, value, bool, bool) {
	sc.ws()
	return "", value{}, false, sc.i == len(sc.s)
}

func (sc *scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

func (sc *scanner) peek() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

func (sc *scanner) eat(c byte) bool {
	if sc.peek() == c {
		sc.i++
		return true
	}
	return false
}

func (sc *scanner) literal(lit string) bool {
	if strings.HasPrefix(sc.s[sc.i:], lit) {
		sc.i += len(lit)
		return true
	}
	return false
}

// value scans any JSON value, skipping objects and arrays.
func (sc *scanner) value(depth int) (value, bool) {
	switch c := sc.peek(); {
	case c == '"':
		raw, esc, ok := sc.str()
		return value{kind: kindString, raw: raw, esc: esc}, ok
	case c == '-' || c >= '0' && c <= '9' || c == 'N' || c == 'I':
		tok, ok := sc.number()
		return value{kind: kindNumber, raw: tok}, ok
	case c == 'n':
		return value{kind: kindNull}, sc.literal("null")
	case c == 't':
		return value{kind: kindBool}, sc.literal("true")
	case c == 'f':
		return value{kind: kindBool}, sc.literal("false")
	case c == '{' || c == '[':
		return value{kind: kindComposite}, sc.composite(depth)
	}
	return value{}, false
}

// str scans a string at the opening quote and returns the text between the quotes.
func (sc *scanner) str() (raw string, esc, ok bool) {
	sc.i++
	start := sc.i
	for sc.i < len(sc.s) {
		switch c := sc.s[sc.i]; {
		case c == '"':
			raw = sc.s[start:sc.i]
			sc.i++
			return raw, esc, true
		case c == '\\':
			esc = true
			sc.i++
			switch sc.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				sc.i++
			case 'u':
				if sc.i+5 > len(sc.s) || hex4(sc.s[sc.i+1:sc.i+5]) < 0 {
					return "", false, false
				}
				sc.i += 5
			default:
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		default:
			sc.i++
		}
	}
	return "", false, false
}

// number scans a JSON number, or NaN, Infinity, -Infinity as Python's json writes them.
func (sc *scanner) number() (string, bool) {
	start := sc.i
	if sc.literal("NaN") {
		return sc.s[start:sc.i], true
	}
	sc.eat('-')
	if sc.literal("Infinity") {
		return sc.s[start:sc.i], true
	}
	if !sc.eat('0') && !sc.digits() {
		return "", false
	}
	if sc.eat('.') && !sc.digits() {
		return "", false
	}
	if sc.eat('e') || sc.eat('E') {
		if !sc.eat('+') {
			sc.eat('-')
		}
		if !sc.digits() {
			return "", false
		}
	}
	return sc.s[start:sc.i], true
}

func (sc *scanner) digits() bool {
	start := sc.i
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
	return sc.i > start
}

// composite skips an object or array at its opening bracket.
func (sc *scanner) composite(depth int) bool {
	if depth >= maxDepth {
		return false
	}
	open := sc.s[sc.i]
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	sc.i++
	sc.ws()
	if sc.eat(closing) {
		return true
	}
	for {
		sc.ws()
		if open == '{' {
			if sc.peek() != '"' {
				return false
			}
			if _, _, ok := sc.str(); !ok {
				return false
			}
			sc.ws()
			if !sc.eat(':') {
				return false
			}
			sc.ws()
		}
		if _, ok := sc.value(depth + 1); !ok {
			return false
		}
		sc.ws()
		if sc.eat(closing) {
			return true
		}
		if !sc.eat(',') {
			return false
		}
	}
}

// hex4 decodes four hex digits, -1 if they are not.
func hex4(s string) rune {
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
