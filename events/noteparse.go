package events

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// maxNote is the longest note the rebuild reads: the events.k8s.io API's bound on a note,
// which every note Note writes fits. A longer one was not written by an exporter (core/v1
// Events have no bound) and is skipped unread.
const maxNote = 1024

// parseNote reads back the facts of a note Note wrote for reason, for the reasons that make
// history: LeaderChanged, LeaseReleased and LeaseExpired. It reads the note from its start,
// sentence by sentence, each holder a Go-quoted string consumed whole, and wants nothing
// after the last sentence: a holder identity, whatever it contains, is never read as one of
// the note's sentences. Anything else is an error, which the rebuild counts and skips.
func parseNote(reason, note string) (Change, error) {
	c := Change{Reason: reason, Held: unknown, Leaderless: unknown}
	p := noteScanner{rest: note}
	var ok bool
	switch reason {
	case ReasonLeaderChanged:
		ok = p.leaderChanged(&c)
	case ReasonLeaseReleased:
		ok = p.leaseReleased(&c)
	case ReasonLeaseExpired:
		ok = p.leaseExpired(&c)
	default:
		return c, fmt.Errorf("reason %q makes no history", reason)
	}
	if !ok || p.rest != "" {
		return c, fmt.Errorf("%s note %q: not in the exporter's wording at byte %d", reason, note, len(note)-len(p.rest))
	}
	return c, nil
}

// leaderChanged reads `Leader changed from Q to Q.` or `Leader changed to Q; the exporter saw
// no previous holder.`, then, each optional and in this order, the previous tenure's length,
// its ending, and the time without a leader.
func (p *noteScanner) leaderChanged(c *Change) bool {
	if !p.lit("Leader changed ") {
		return false
	}
	if p.lit("from ") {
		if !p.holder(&c.Old) || !p.lit(" to ") || !p.holder(&c.New) || !p.lit(".") {
			return false
		}
	} else if !p.lit("to ") || !p.holder(&c.New) || !p.lit("; the exporter saw no previous holder.") {
		return false
	}
	if p.lit(" The previous tenure lasted ") && (!p.duration(&c.Held) || !p.lit(".")) {
		return false
	}
	c.Ended = lock.Unknown
	if p.lit(" It ended: ") && !p.ending(&c.Ended) {
		return false
	}
	if p.lit(" Without a leader for ") && (!p.duration(&c.Leaderless) || !p.lit(".")) {
		return false
	}
	return true
}

// leaseReleased reads `Q released the lock[ after holding it for D].[ It ended: …handed over….]`.
func (p *noteScanner) leaseReleased(c *Change) bool {
	if !p.holder(&c.Old) || !p.lit(" released the lock") {
		return false
	}
	if p.lit(" after holding it for ") && !p.duration(&c.Held) {
		return false
	}
	if !p.lit(".") {
		return false
	}
	c.Ended = lock.Released
	if p.lit(" It ended: ") {
		return p.ending(&c.Ended) && c.Ended == lock.HandedOver
	}
	return true
}

// leaseExpired reads `Q stopped renewing[ after holding the lock for D]; its lease expired D
// ago and nobody has taken over.`
func (p *noteScanner) leaseExpired(c *Change) bool {
	if !p.holder(&c.Old) || !p.lit(" stopped renewing") {
		return false
	}
	if p.lit(" after holding the lock for ") && !p.duration(&c.Held) {
		return false
	}
	c.Ended = lock.Expired
	return p.lit("; its lease expired ") && p.duration(&c.Leaderless) && p.lit(" ago and nobody has taken over.")
}

// noteScanner consumes a note from its start; rest is what is left to read.
type noteScanner struct{ rest string }

// lit consumes w if the rest starts with it.
func (p *noteScanner) lit(w string) bool {
	var ok bool
	p.rest, ok = strings.CutPrefix(p.rest, w)
	return ok
}

// holder consumes one Go-quoted string whole, however many sentences its content mimics.
func (p *noteScanner) holder(to *string) bool {
	if !strings.HasPrefix(p.rest, `"`) {
		return false
	}
	q, err := strconv.QuotedPrefix(p.rest)
	if err != nil {
		return false
	}
	s, err := strconv.Unquote(q)
	if err != nil {
		return false
	}
	*to, p.rest = strings.Clone(s), p.rest[len(q):]
	return true
}

// duration consumes a time.Duration's String ("1h2m3.5s"): digits, unit letters, and a
// decimal point only between digits, so the sentence's own full stop is left.
func (p *noteScanner) duration(to *time.Duration) bool {
	n := durationLen(p.rest)
	d, err := time.ParseDuration(p.rest[:n])
	if err != nil || d < 0 {
		return false
	}
	*to, p.rest = d, p.rest[n:]
	return true
}

func durationLen(s string) int {
	digit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	n := 0
	for n < len(s) {
		switch ch := s[n]; {
		case digit(n), ch >= 'a' && ch <= 'z', ch == '.' && digit(n+1):
			n++
		case strings.HasPrefix(s[n:], "µ"):
			n += len("µ")
		default:
			return n
		}
	}
	return n
}

// ending consumes the words of one ending and the sentence's full stop.
func (p *noteScanner) ending(to *lock.Ending) bool {
	for e, w := range endings {
		if p.lit(w + ".") {
			*to = e
			return true
		}
	}
	return false
}
