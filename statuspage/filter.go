package statuspage

import "github.com/lease-exporter/lease-exporter/statuspage/api"

// Filter selects leases; its zero value selects all.
type Filter struct {
	Namespace, Class, Kind string
	UnhealthyOnly          bool
}

func (f Filter) match(l *api.Lease) bool {
	return f.matchLock(l.Namespace, l.Class, l.Kind) && (!f.UnhealthyOnly || !l.Healthy)
}

// matchLock matches the lock's address and class, not its health.
func (f Filter) matchLock(namespace, class, kind string) bool {
	return (f.Namespace == "" || f.Namespace == namespace) && (f.Class == "" || f.Class == class) &&
		(f.Kind == "" || f.Kind == kind)
}
