package collector

import (
	"fmt"

	"github.com/lease-exporter/lease-exporter/informer"
)

// NodeLeases says which series node-heartbeat Leases get. A 15,000-node cluster has 15,000
// node Leases; the full set is ~9 series each, while node health needs only two.
type NodeLeases string

// The NodeLeases choices; excluding them entirely is --namespaces-exclude=kube-node-lease.
const (
	NodeLeasesFull    NodeLeases = "full"
	NodeLeasesReduced NodeLeases = "reduced" // only lease_held and lease_renew_age_seconds
)

// ParseNodeLeases validates a --node-leases value.
func ParseNodeLeases(s string) (NodeLeases, error) {
	switch m := NodeLeases(s); m {
	case NodeLeasesFull, NodeLeasesReduced:
		return m, nil
	}
	return "", fmt.Errorf("invalid --node-leases %q: use full or reduced (drop node Leases with --namespaces-exclude=kube-node-lease)", s)
}

// Option configures New and NewTextWriter.
type Option func(*settings)

type settings struct{ nodeLeases NodeLeases }

// WithNodeLeases sets the series node-heartbeat Leases get.
func WithNodeLeases(m NodeLeases) Option { return func(s *settings) { s.nodeLeases = m } }

func newSettings(opts []Option) settings {
	s := settings{nodeLeases: NodeLeasesFull}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// exports reports whether f is exported for l under these settings.
func (s settings) exports(f *family, l *informer.Lease) bool {
	return s.nodeLeases != NodeLeasesReduced || l.Class != informer.ClassNodeHeartbeat || f.nodeEssential
}
