package main

import (
	"fmt"
	"strings"

	"github.com/lease-exporter/lease-exporter/informer/lock"
)

// lockList is the value of --locks: Leases until set; each use of the flag adds its kinds,
// so deploy components can each enable one. Every use is parsed into kinds as it is given;
// a name that is no kind is reported by validate, with the whole value, as a usage error.
type lockList struct {
	uses    []string // as given, for String and the error messages
	kinds   []lock.Kind
	unknown string // the first name that is no lock kind's resource
}

func (l *lockList) String() string {
	if l == nil || l.uses == nil {
		return lock.DefaultKind.Resource()
	}
	return strings.Join(l.uses, ",")
}

func (l *lockList) Set(s string) error {
	l.uses = append(l.uses, s)
	for _, name := range splitList(s) {
		k, ok := lock.KindOfResource(name)
		if !ok && l.unknown == "" {
			l.unknown = name
		}
		if ok {
			l.kinds = append(l.kinds, k)
		}
	}
	return nil
}

// Kinds returns the lock kinds to watch, in the order given.
func (l *lockList) Kinds() []lock.Kind {
	if l.uses == nil {
		return lock.DefaultKinds()
	}
	return l.kinds
}

// validate reports a name that is no lock kind, or a --locks that names none.
func (l *lockList) validate() error {
	switch {
	case l.unknown != "":
		return fmt.Errorf("invalid --locks %q: unknown lock kind %q: use %s, comma-separated", l, l.unknown, listKinds("or"))
	case l.uses != nil && len(l.kinds) == 0:
		return fmt.Errorf("invalid --locks %q: name at least one of %s", l, listKinds("or"))
	}
	return nil
}

// locksUsage is the help of --locks, naming every lock kind.
func locksUsage() string {
	var resources, annotations []string
	for _, k := range lock.Kinds {
		resources = append(resources, k.Resource())
		if k.Annotation() {
			annotations = append(annotations, k.String())
		}
	}
	return "Comma-separated kinds of lock objects to watch: " + strings.Join(resources, ", ") +
		" (the leader annotation of " + joinLast(annotations, "and") + " locks, watched metadata-only). " +
		"May be repeated; the values add up."
}

// listKinds lists the values --locks takes, "leases, configmaps or endpoints" for conj "or".
func listKinds(conj string) string {
	var resources []string
	for _, k := range lock.Kinds {
		resources = append(resources, k.Resource())
	}
	return joinLast(resources, conj)
}

// joinLast joins items with commas, the last two with conj: "a, b and c".
func joinLast(items []string, conj string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}
