package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/leaderelection"
)

// provider is component-base's leader-election metrics provider
// (k8s.io/component-base/metrics/prometheus/clientgo/leaderelection): the same names, help
// and labels that kube-scheduler, kube-controller-manager and controller-runtime export.
type provider struct {
	status   *prometheus.GaugeVec
	slowpath *prometheus.CounterVec
}

var _ leaderelection.MetricsProvider = (*provider)(nil)

func newProvider(reg prometheus.Registerer) *provider {
	p := &provider{
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leader_election_master_status",
			Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"}),
		slowpath: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leader_election_slowpath_total",
			Help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"}),
	}
	reg.MustRegister(p.status, p.slowpath)
	return p
}

func (p *provider) NewLeaderMetric() leaderelection.LeaderMetric { return p }

func (p *provider) On(name string)                { p.status.WithLabelValues(name).Set(1) }
func (p *provider) Off(name string)               { p.status.WithLabelValues(name).Set(0) }
func (p *provider) SlowpathExercised(name string) { p.slowpath.WithLabelValues(name).Inc() }
