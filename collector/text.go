package collector

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lease-exporter/lease-exporter/informer"
	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// TextWriter renders the per-lease series straight into the Prometheus text format. At 100k
// Leases the client_golang path builds a million const metrics and protobuf messages per
// scrape; this path appends bytes to a buffered writer instead. Its output is byte-identical
// to the client_golang path (text_test.go proves it), so the two are interchangeable.
type TextWriter struct {
	view     informer.View
	now      func() time.Time
	settings settings
}

// NewTextWriter returns a writer over view; nil now means time.Now.
func NewTextWriter(view informer.View, now func() time.Time, opts ...Option) *TextWriter {
	if now == nil {
		now = time.Now
	}
	return &TextWriter{view: view, now: now, settings: newSettings(opts)}
}

// Write writes self (already gathered families, sorted by name, as client_golang returns them)
// merged in name order with the per-lease families, as one text exposition.
func (w *TextWriter) Write(out io.Writer, self []*dto.MetricFamily) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	var leases, byInfo []*lock.Lease
	var at int64
	if w.view.HasSynced() {
		at = informer.JudgedAt(w.view, w.now()).UnixMicro()
		w.view.Range(func(l *lock.Lease) { leases = append(leases, l) })
		// client_golang sorts a family's series by label values in label-name order. A lock is
		// unique by kind, namespace and name, so lease_info's later labels never decide.
		slices.SortFunc(leases, func(a, b *lock.Lease) int {
			return cmp.Or(strings.Compare(a.Class.String(), b.Class.String()), strings.Compare(a.Kind().String(), b.Kind().String()),
				strings.Compare(a.Name(), b.Name()), strings.Compare(a.Namespace(), b.Namespace()))
		})
		byInfo = slices.Clone(leases)
		slices.SortStableFunc(byInfo, func(a, b *lock.Lease) int {
			return cmp.Or(strings.Compare(a.Class.String(), b.Class.String()), strings.Compare(a.Holder, b.Holder),
				strings.Compare(a.Kind().String(), b.Kind().String()))
		})
	}
	buf := make([]byte, 0, 256)
	i := 0
	for _, f := range families {
		for ; i < len(self) && self[i].GetName() < f.name; i++ {
			if _, err := expfmt.MetricFamilyToText(bw, self[i]); err != nil {
				return err
			}
		}
		order := leases
		if f.name == infoFamily {
			order = byInfo
		}
		buf = w.appendFamily(buf[:0], bw, f, order, at)
	}
	for ; i < len(self); i++ {
		if _, err := expfmt.MetricFamilyToText(bw, self[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendFamily writes one family's HELP, TYPE and samples; nothing when it has no samples.
func (w *TextWriter) appendFamily(buf []byte, bw *bufio.Writer, f *family, leases []*lock.Lease, at int64) []byte {
	header := false
	for _, l := range leases {
		v, ok := f.value(l, at)
		if !ok || !w.settings.exports(f, l) {
			continue
		}
		if !header {
			typ := " gauge\n"
			if f.counter {
				typ = " counter\n"
			}
			_, _ = bw.WriteString("# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + typ)
			header = true
		}
		buf = append(buf[:0], f.name...)
		buf = append(buf, `{class="`...)
		buf = append(buf, l.Class.String()...)
		if f.name == infoFamily {
			buf = appendLabel(buf, `",holder="`, l.Holder)
		}
		buf = append(buf, `",kind="`...)
		buf = append(buf, l.Kind().String()...)
		buf = appendLabel(buf, `",lease="`, l.Name())
		buf = appendLabel(buf, `",namespace="`, l.Namespace())
		if f.name == infoFamily {
			ownerKind, ownerName := l.Owner()
			buf = appendLabel(buf, `",owner_kind="`, ownerKind)
			buf = appendLabel(buf, `",owner_name="`, ownerName)
			buf = appendLabel(buf, `",preferred_holder="`, l.PreferredHolder())
			buf = appendLabel(buf, `",strategy="`, l.Strategy())
		}
		buf = append(buf, `"} `...)
		buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		buf = append(buf, '\n')
		_, _ = bw.Write(buf) // errors surface from Flush
	}
	return buf
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
