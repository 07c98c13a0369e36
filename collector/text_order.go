package collector

import (
	"slices"
	"strings"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// The order of the text exposition is client_golang's: a family's series sorted by their
// label values in label-name order, so class, kind, lease, namespace for every family but
// lease_info, whose holder comes second. A lock is unique by kind, namespace and name, so
// lease_info's later labels never decide. The writer sorts by ranks of the class and kind
// values, computed once from the strings themselves (so the order is theirs), rather than
// comparing the strings on each of the two million comparisons of a scrape at 100k locks.

var (
	// classValue and kindValue are the class and kind labels' values by Class and Kind, for
	// every value the byte can hold: Class.String and Kind.String, looked up by index.
	classValue, kindValue [256]string
	// classRank and kindRank order those values as strings.Compare does.
	classRank, kindRank [256]uint8
)

func init() {
	for i := range 256 {
		classValue[i], kindValue[i] = lock.Class(i).String(), lock.Kind(i).String()
	}
	rank(&classValue, &classRank)
	rank(&kindValue, &kindRank)
}

// rank sets ranks[i] to the position of values[i] among the distinct values, in string order.
func rank(values *[256]string, ranks *[256]uint8) {
	distinct := slices.Compact(slices.Sorted(slices.Values(values[:])))
	for i, v := range values {
		r, _ := slices.BinarySearch(distinct, v)
		ranks[i] = uint8(r)
	}
}

// infoFamilyDef is lease_info's definition, whose series have their own order.
var infoFamilyDef = func() *family {
	for _, f := range families {
		if f.name == infoFamily {
			return f
		}
	}
	panic("no " + infoFamily + " family")
}()

// order sorts leases in the order of every family but lease_info, and returns with them the
// locks that export lease_info, in its order.
func (w *TextWriter) order(leases []*lock.Lease) (all, info []*lock.Lease) {
	slices.SortFunc(leases, compareSeries)
	n := 0 // counted first: at 100k locks, growing the slice would allocate it several times over
	for _, l := range leases {
		if w.settings.exports(infoFamilyDef, l) {
			n++
		}
	}
	info = make([]*lock.Lease, 0, n)
	for _, l := range leases {
		if w.settings.exports(infoFamilyDef, l) {
			info = append(info, l)
		}
	}
	slices.SortFunc(info, compareInfo)
	return leases, info
}

// compareSeries orders by class, kind, name, namespace.
func compareSeries(a, b *lock.Lease) int {
	if ra, rb := classRank[a.Class], classRank[b.Class]; ra != rb {
		return int(ra) - int(rb)
	}
	if ra, rb := kindRank[a.Kind()], kindRank[b.Kind()]; ra != rb {
		return int(ra) - int(rb)
	}
	if c := strings.Compare(a.Name(), b.Name()); c != 0 {
		return c
	}
	return strings.Compare(a.Namespace(), b.Namespace())
}

// compareInfo orders by class, holder, kind, name, namespace: lease_info's labels, which are
// compareSeries' with the holder second.
func compareInfo(a, b *lock.Lease) int {
	if ra, rb := classRank[a.Class], classRank[b.Class]; ra != rb {
		return int(ra) - int(rb)
	}
	if c := strings.Compare(a.Holder, b.Holder); c != 0 {
		return c
	}
	return compareSeries(a, b)
}
