package lock

import (
	"fmt"
	"slices"
	"strings"
)

// How both commands read and name lock kinds and classes: the exporter's --locks, --expect,
// --history.classes and --events.classes, and kubectl lease's --locks and --class, so that a
// value one takes the other takes too, and both say the same when it is wrong.

// ParseKind reads one kind as --locks and --expect spell it: its resource ("configmaps"), in
// any case and with spaces around it, as kubectl reads resource names.
func ParseKind(name string) (Kind, error) {
	if k, ok := KindOfResource(strings.ToLower(strings.TrimSpace(name))); ok {
		return k, nil
	}
	return 0, fmt.Errorf("unknown lock kind %q: use %s", name, KindNames("or"))
}

// ParseKinds reads the values of a --locks given any number of times: kinds, comma-separated,
// that add up; each kind once, in the order first given. Empty items are ignored, but the
// values must name at least one kind.
func ParseKinds(values []string) ([]Kind, error) {
	var kinds []Kind
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			if strings.TrimSpace(name) == "" {
				continue
			}
			k, err := ParseKind(name)
			if err != nil {
				return nil, fmt.Errorf("%w, comma-separated", err)
			}
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("name at least one of %s", KindNames("or"))
	}
	return kinds, nil
}

// KindNames lists the values --locks takes, every kind's resource: "leases, configmaps or
// endpoints" for conj "or".
func KindNames(conj string) string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Resource()
	}
	return JoinLast(names, conj)
}

// ParseClass reads one class as the flags spell it, its label value ("node-heartbeat").
func ParseClass(name string) (Class, error) {
	if c, ok := classNamed(strings.ToLower(strings.TrimSpace(name))); ok {
		return c, nil
	}
	return 0, fmt.Errorf("unknown class %q: use %s", name, ClassNames("or"))
}

// ClassNames lists the values the class flags take: "leader-election, node-heartbeat or
// apiserver-identity" for conj "or".
func ClassNames(conj string) string {
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = c.String()
	}
	return JoinLast(names, conj)
}

// JoinLast joins items with commas, the last two with conj: "a, b and c".
func JoinLast(items []string, conj string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}
