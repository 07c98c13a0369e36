package main

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lease-exporter/lease-exporter/lock"
)

// expectList is the value of --expect: the locks that must exist, as namespace/name or
// namespace/name/resource (the values --locks takes; leases by default). Each use adds to
// the list; validate reports the first entry that is not well-formed, as a usage error.
type expectList struct {
	uses    []string
	entries []string // every comma-separated entry, as given
}

func (e *expectList) String() string {
	if e == nil {
		return ""
	}
	return strings.Join(e.uses, ",")
}

func (e *expectList) Set(s string) error {
	e.uses = append(e.uses, s)
	e.entries = append(e.entries, splitList(s)...)
	return nil
}

const expectUsage = "Locks that must exist, comma-separated, as namespace/name (a Lease) or namespace/name/kind " +
	"with kind one of the --locks values; may be repeated. Each gets a lease_expected_present series, which the LeaseMissing alert reads."

// locks parses and checks every entry against what the exporter watches: a lock the
// exporter could never see would read as missing forever.
func (e *expectList) locks(watched []lock.Kind, namespaces, excluded []string) ([]lock.Ref, error) {
	var out []lock.Ref
	for _, entry := range e.entries {
		l, err := parseExpected(entry)
		if err != nil {
			return nil, fmt.Errorf("invalid --expect %q: %w", entry, err)
		}
		switch {
		case !slices.Contains(watched, l.Kind):
			return nil, fmt.Errorf("invalid --expect %q: %s locks are not watched: add --locks=leases,%s", entry, l.Kind.Resource(), l.Kind.Resource())
		case namespaces != nil && !slices.Contains(namespaces, l.Namespace):
			return nil, fmt.Errorf("invalid --expect %q: namespace %s is not in --namespaces, so the lock could never be seen", entry, l.Namespace)
		case slices.Contains(excluded, l.Namespace):
			return nil, fmt.Errorf("invalid --expect %q: namespace %s is in --namespaces-exclude, so the lock could never be seen", entry, l.Namespace)
		case slices.Contains(out, l):
			return nil, fmt.Errorf("invalid --expect: %s is listed twice", l)
		}
		out = append(out, l)
	}
	return out, nil
}

func parseExpected(entry string) (lock.Ref, error) {
	parts := strings.Split(entry, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return lock.Ref{}, fmt.Errorf("want namespace/name or namespace/name/kind (kind: %s)", lock.KindNames("or"))
	}
	l := lock.Ref{Kind: lock.DefaultKind, Namespace: parts[0], Name: parts[1]}
	if errs := validation.IsDNS1123Label(l.Namespace); len(errs) > 0 {
		return l, fmt.Errorf("namespace %q: %s", l.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(l.Name); len(errs) > 0 {
		return l, fmt.Errorf("name %q: %s", l.Name, strings.Join(errs, "; "))
	}
	if len(parts) == 3 {
		k, err := lock.ParseKind(parts[2])
		if err != nil {
			return l, err
		}
		l.Kind = k
	}
	return l, nil
}
