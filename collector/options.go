package collector

import "github.com/lease-exporter/lease-exporter/informer/lock"

// Option configures New and NewTextWriter.
type Option func(*settings)

type settings struct{ extended bool }

// WithExtended exports every family for every lock (--metrics.extended): the series the lean
// default leaves out because PromQL derives them from the others, and the leader-election
// families for node-heartbeat Leases.
func WithExtended(on bool) Option { return func(s *settings) { s.extended = on } }

func newSettings(opts []Option) settings {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	return s
}

// exports reports whether f is exported for l under these settings. By default a
// node-heartbeat Lease gets two series (held and the observed renew time: node health needs
// no more, and a large cluster has tens of thousands of them), every other lock seven.
func (s settings) exports(f *family, l *lock.Lease) bool {
	switch {
	case s.extended || f.set == everyLock:
		return true
	case f.set == elections:
		return l.Class != lock.ClassNodeHeartbeat
	default:
		return false
	}
}
