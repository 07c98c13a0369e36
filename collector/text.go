package collector

import (
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/lock"
)

// TextWriter renders the per-lease series straight into the Prometheus text format. At 100k
// Leases the client_golang path builds a million const metrics and protobuf messages per
// scrape; this path appends bytes to a buffered writer instead. Its output is byte-identical
// to the client_golang path (text_test.go proves it), so the two are interchangeable. Like
// that path's one pass over the view, a scrape reads the cache once (informer.Snapshot) and
// writes every family from what it read: a lock that arrives, goes or changes while the
// scrape is written is in every family of it or in none, always as one record
// (TestTextWriterLockArrivingMidScrape and its neighbours).
type TextWriter struct {
	view     informer.Ordered
	now      func() time.Time
	settings Settings
}

// NewTextWriter returns a writer of view's per-lease series.
func NewTextWriter(view informer.Ordered, s Settings) *TextWriter {
	return &TextWriter{view: view, now: s.clock(), settings: s}
}

// Write writes self (already gathered families, sorted by name, as client_golang returns them)
// merged in name order with the per-lease families, as one text exposition. The per-lease
// families are written from one snapshot of the cache, each walking it in the order the cache
// keeps (informer.Ordered): nothing is sorted per scrape, and bytes leave as soon as the first
// buffer is full.
func (w *TextWriter) Write(out io.Writer, self []*dto.MetricFamily) error {
	tb := newTextBuffer(out)
	var snap informer.Snapshot // nil before the initial list: no per-lease series then
	var at int64
	if w.view.HasSynced() {
		at = w.view.JudgedAt(w.now()).UnixMicro()
		// Of the node heartbeats, only those with a series: by default the overdue ones.
		snap = w.view.Snapshot(func(l *lock.Lease) bool { return w.settings.writesAny(l, at) })
		defer snap.Release()
	}
	i := 0
	for _, f := range families {
		for ; i < len(self) && self[i].GetName() < f.name; i++ {
			if _, err := expfmt.MetricFamilyToText(tb, self[i]); err != nil {
				return err
			}
		}
		if snap != nil {
			w.writeFamily(tb, snap, f, at)
		}
	}
	for ; i < len(self); i++ {
		if _, err := expfmt.MetricFamilyToText(tb, self[i]); err != nil {
			return err
		}
	}
	return tb.flush()
}

// writeFamily writes one family's HELP, TYPE and samples, walking snap's locks in its order;
// nothing when it has no samples.
func (w *TextWriter) writeFamily(tb *textBuffer, snap informer.Snapshot, f *family, at int64) {
	var exported [lock.NumClasses]bool // exports, decided once per class, not once per series
	any, lastRank := false, uint8(0)
	for _, c := range lock.Classes {
		if exported[c] = w.settings.exportsClass(f, c); exported[c] {
			any, lastRank = true, max(lastRank, c.Rank())
		}
	}
	if !any {
		return
	}
	order := lock.BySeries
	if f.name == infoFamily {
		order = lock.ByInfo
	}
	header := false
	// The snapshot's node heartbeats are in no order, and only those with a sample are
	// sorted: in the default summary, the overdue ones; none for a family without them.
	var nodes func(*lock.Lease) bool
	if exported[lock.ClassNodeHeartbeat] {
		nodes = func(l *lock.Lease) bool { _, ok := f.value(l, at); return ok }
	}
	snap.InOrder(order, nodes, func(batch []*lock.Lease) bool {
		lock.Warm(batch) // the batch's records into cache, many fetched at once
		for _, l := range batch {
			if !exported[l.Class] {
				if l.Class.Rank() > lastRank {
					return false // the order begins with the class: no exported lock follows
				}
				continue
			}
			v, ok := f.value(l, at)
			if !ok {
				continue
			}
			if !header {
				typ := " gauge\n"
				if f.counter {
					typ = " counter\n"
				}
				tb.buf = append(append(append(append(append(append(tb.buf, "# HELP "...), f.name...), ' '), f.help...), "\n# TYPE "...), f.name...)
				tb.buf = append(tb.buf, typ...)
				header = true
			}
			tb.buf = appendSample(tb.buf, f, l, v)
			tb.flushFull() // a write error surfaces from the last flush
		}
		return true
	})
}

// appendSample appends l's sample of f with value v, as one line of the text format.
func appendSample(buf []byte, f *family, l *lock.Lease, v float64) []byte {
	buf = append(buf, f.name...)
	buf = append(buf, `{class="`...)
	buf = append(buf, lock.ClassValue[l.Class]...)
	if f.name == infoFamily {
		buf = appendLabel(buf, `",holder="`, l.Holder)
	}
	buf = append(buf, `",kind="`...)
	buf = append(buf, lock.KindValue[l.Kind()]...)
	if l.PlainKey() {
		buf = append(buf, `",lease="`...)
		buf = append(buf, l.Name()...)
		buf = append(buf, `",namespace="`...)
		buf = append(buf, l.Namespace()...)
	} else {
		buf = appendLabel(buf, `",lease="`, l.Name())
		buf = appendLabel(buf, `",namespace="`, l.Namespace())
	}
	if f.name == infoFamily {
		ownerKind, ownerName := l.Owner()
		buf = appendLabel(buf, `",owner_kind="`, ownerKind)
		buf = appendLabel(buf, `",owner_name="`, ownerName)
		buf = appendLabel(buf, `",preferred_holder="`, l.PreferredHolder())
		buf = appendLabel(buf, `",strategy="`, l.Strategy())
	}
	buf = append(buf, `"} `...)
	buf = appendValue(buf, v)
	return append(buf, '\n')
}

// appendValue appends v as the text format writes a sample value (strconv's shortest 'g').
// Most values are small whole numbers (0 and 1, durations, counts), which 'g' writes as the
// integer they are below a million: those take the integer path, several times faster.
func appendValue(buf []byte, v float64) []byte {
	if v > -1e6 && v < 1e6 && v == math.Trunc(v) && (v != 0 || !math.Signbit(v)) {
		return strconv.AppendInt(buf, int64(v), 10)
	}
	return strconv.AppendFloat(buf, v, 'g', -1, 64)
}

// appendLabel appends prefix and v escaped as the text format escapes label values.
func appendLabel(buf []byte, prefix, v string) []byte {
	buf = append(buf, prefix...)
	if strings.IndexByte(v, '\\') < 0 && strings.IndexByte(v, '"') < 0 && strings.IndexByte(v, '\n') < 0 {
		return append(buf, v...)
	}
	for i := range len(v) {
		switch c := v[i]; c {
		case '\\':
			buf = append(buf, `\\`...)
		case '"':
			buf = append(buf, `\"`...)
		case '\n':
			buf = append(buf, `\n`...)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}
