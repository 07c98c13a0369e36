package main

import (
	"fmt"
	"strings"

	"github.com/lease-exporter/lease-exporter/lock"
)

// lockList is the value of --locks: Leases until set; each use of the flag adds its kinds,
// so deploy components can each enable one. The uses are kept as given, for String and the
// error message, and read by lock.ParseKinds, the one reader both commands share; a name that
// is no kind is reported by validate, with the whole value, as a usage error.
type lockList struct {
	uses []string
}

func (l *lockList) String() string {
	if l == nil || l.uses == nil {
		return lock.DefaultKind.Resource()
	}
	return strings.Join(l.uses, ",")
}

func (l *lockList) Set(s string) error {
	l.uses = append(l.uses, s)
	return nil
}

// Kinds returns the lock kinds to watch, in the order given; nil when validate fails.
func (l *lockList) Kinds() []lock.Kind {
	if l.uses == nil {
		return lock.DefaultKinds()
	}
	kinds, _ := lock.ParseKinds(l.uses)
	return kinds
}

// validate reports a name that is no lock kind, or a --locks that names none.
func (l *lockList) validate() error {
	if l.uses == nil {
		return nil
	}
	if _, err := lock.ParseKinds(l.uses); err != nil {
		return fmt.Errorf("invalid --locks %q: %w", l, err)
	}
	return nil
}

// locksUsage is the help of --locks, naming every lock kind.
func locksUsage() string {
	var annotations []string
	for _, k := range lock.Kinds {
		if k.Annotation() {
			annotations = append(annotations, k.String())
		}
	}
	return "Comma-separated kinds of lock objects to watch: " + lock.KindNames("and") +
		" (the leader annotation of " + lock.JoinLast(annotations, "and") + " locks, watched metadata-only). " +
		"May be repeated; the values add up."
}
