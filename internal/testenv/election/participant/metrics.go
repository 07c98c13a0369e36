package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/leaderelection"
)

// provider is component-base's leader-election metrics provider
// (k8s.io/component-base/metrics/prometheus/clientgo/leaderelection), which controller-runtime
// copies: the gauge kube-scheduler, kube-controller-manager and controllers export, with the
// same name, help and label. The slow-path counter the newer hook adds is left out: the
// alerts do not read it.
type provider struct{ status *prometheus.GaugeVec }

var _ leaderelection.MetricsProvider = (*provider)(nil)

func newProvider(reg prometheus.Registerer) *provider {
	p := &provider{status: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"})}
	reg.MustRegister(p.status)
	return p
}

func (p *provider) NewLeaderMetric() leaderelection.LeaderMetric { return p }

func (p *provider) On(name string)           { p.status.WithLabelValues(name).Set(1) }
func (p *provider) Off(name string)          { p.status.WithLabelValues(name).Set(0) }
func (p *provider) SlowpathExercised(string) {}
