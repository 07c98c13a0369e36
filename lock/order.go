package lock

import (
	"slices"
	"strings"
	"sync/atomic"
)

// The orders of the text exposition, client_golang's: a family's series sorted by their label
// values in label-name order, so class, kind, lease, namespace for every family but
// lease_info, whose holder comes second. A lock is unique by kind, namespace and name, so
// lease_info's later labels never decide. The cache keeps its locks in both orders as they
// come, go and change holder (a renewal moves nothing), so a scrape walks them in order
// instead of sorting them. Classes and kinds compare by ranks computed once from their
// strings (so the order is the strings'), not by comparing the strings each time.

// Order is one of the exposition's orders.
type Order uint8

const (
	// BySeries is class, kind, name, namespace: every family but lease_info.
	BySeries Order = iota
	// ByInfo is class, holder, kind, name, namespace: lease_info.
	ByInfo
	// NumOrders is the number of orders.
	NumOrders
)

// Compare is the order's comparison: negative when a comes before b, 0 for the same lock
// (or, ByInfo, the same lock with the same holder).
func (o Order) Compare(a, b *Lease) int {
	if o == ByInfo {
		return compareInfo(a, b)
	}
	return compareSeries(a, b)
}

var (
	// ClassValue and KindValue are the class and kind labels' values by Class and Kind, for
	// every value the byte can hold: Class.String and Kind.String, looked up by index.
	ClassValue, KindValue [256]string
	// classRank and kindRank order those values as strings.Compare does.
	classRank, kindRank [256]uint8
)

func init() {
	for i := range 256 {
		ClassValue[i], KindValue[i] = Class(i).String(), Kind(i).String()
	}
	rank(&ClassValue, &classRank)
	rank(&KindValue, &kindRank)
}

// Rank is c's place in the exposition's orders, which begin with the class.
func (c Class) Rank() uint8 { return classRank[c] }

// rank sets ranks[i] to the position of values[i] among the distinct values, in string order.
func rank(values *[256]string, ranks *[256]uint8) {
	distinct := slices.Compact(slices.Sorted(slices.Values(values[:])))
	for i, v := range values {
		r, _ := slices.BinarySearch(distinct, v)
		ranks[i] = uint8(r)
	}
}

// compareSeries orders by class, kind, name, namespace.
func compareSeries(a, b *Lease) int {
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
func compareInfo(a, b *Lease) int {
	if ra, rb := classRank[a.Class], classRank[b.Class]; ra != rb {
		return int(ra) - int(rb)
	}
	if c := strings.Compare(a.Holder, b.Holder); c != 0 {
		return c
	}
	return compareSeries(a, b)
}

// Warm reads a byte from each part of every record of batch that a scrape reads: its two
// cache lines and its key's and holder's bytes, which are separate allocations. A scrape walks
// records in name order, which is not their order in memory, so each would otherwise cost a
// wait for memory several times over, one record after another; reading them first in a
// tight loop lets the processor fetch many at once, and the scrape then finds them in cache
// (at 100k locks a scrape's writer took 58 ms instead of 136: docs/benchmarks.md).
func Warm(batch []*Lease) {
	var w Class
	for _, l := range batch {
		w ^= l.Class ^ Class(l.key[0])
		if len(l.Holder) > 0 {
			w ^= Class(l.Holder[0])
		}
	}
	warmed.Store(uint32(w))
}

// warmed keeps Warm's reads from being optimised away.
var warmed atomic.Uint32
