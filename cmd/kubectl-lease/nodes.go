package main

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/lock"
)

// A large cluster has a node heartbeat per node: the list sums them up, as the status page
// and lease_class_locks do (lock.Summary), and names the few most overdue; --class
// node-heartbeat lists them all.

// maxOverdueShown bounds the overdue heartbeats named under the summary.
const maxOverdueShown = 10

type nodeSummary struct {
	lock.Summary
	overdue []*lock.Lease
}

func (s *nodeSummary) add(l *lock.Lease, at time.Time) {
	if s.Summary.Add(l, at.UnixMicro()).Overdue() {
		s.overdue = append(s.overdue, l)
	}
}

var overdueColumns = []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"},
	{Name: "Holder", Type: "string"}, {Name: "State", Type: "string"}, {Name: "Renewed", Type: "string"}, {Name: "Expired", Type: "string"}}

// print writes the summary, judged at at, and the most overdue heartbeats, the most overdue first.
func (s *nodeSummary) print(w *bufio.Writer, at time.Time) error {
	var counts []string
	for _, st := range lock.Standings {
		counts = append(counts, fmt.Sprintf("%d %s", s.Standings[st], st))
	}
	fmt.Fprintf(w, "\nNode heartbeats: %d (%s).", s.Total(), strings.Join(counts, ", "))
	if len(s.overdue) == 0 {
		fmt.Fprintln(w, " --class node-heartbeat lists them.")
		return nil
	}
	slices.SortFunc(s.overdue, lock.MoreOverdue(at.UnixMicro()))
	shown := s.overdue[:min(len(s.overdue), maxOverdueShown)]
	fmt.Fprintf(w, " The %d most overdue of %d (--class node-heartbeat lists them all):\n", len(shown), len(s.overdue))
	var rows [][]any
	for _, l := range shown {
		j, expired := judge(l, at, true), "<none>"
		if past, ok := l.PastExpiry(at.UnixMicro()); ok {
			expired = human(time.Duration(past)*time.Microsecond) + " ago"
		}
		rows = append(rows, []any{j.Name, orNone(j.Holder), j.Standing, ago(j.ObservedRenewTime, at), expired})
	}
	return newTable(w, overdueColumns, false, false).print(rows)
}
