package collector

import "github.com/prometheus/client_golang/prometheus"

// The metric contract. docs/metrics.md documents every name here; docs_test.go keeps them in step.
var (
	leaseLabels = []string{"namespace", "lease", "class"}

	descInfo = prometheus.NewDesc("lease_info",
		"Current holder of the Lease (holder is empty when there is none), always 1.",
		append(leaseLabels, "holder", "strategy", "preferred_holder"), nil)
	descHeld = prometheus.NewDesc("lease_held",
		"Whether the Lease has a holder and is not expired at evaluation time (1) or not (0).", leaseLabels, nil)
	descRenew = prometheus.NewDesc("lease_renew_timestamp_seconds",
		"Unix time of spec.renewTime, the holder's last renewal, by the holder's clock.", leaseLabels, nil)
	descAcquire = prometheus.NewDesc("lease_acquire_timestamp_seconds",
		"Unix time of spec.acquireTime, when the current holder acquired the Lease.", leaseLabels, nil)
	descDuration = prometheus.NewDesc("lease_duration_seconds",
		"Value of spec.leaseDurationSeconds, how long after the last renewal the Lease expires.", leaseLabels, nil)
	descExpiry = prometheus.NewDesc("lease_expiry_timestamp_seconds",
		"Unix time at which the Lease expires unless renewed: renewTime plus leaseDurationSeconds.", leaseLabels, nil)
	descRenewAge = prometheus.NewDesc("lease_renew_age_seconds",
		"Seconds from spec.renewTime to evaluation time.", leaseLabels, nil)
	descTransitions = prometheus.NewDesc("lease_transitions_total",
		"Value of spec.leaseTransitions, holder changes as counted by the electing clients.", leaseLabels, nil)
	descObservedChanges = prometheus.NewDesc("lease_observed_holder_changes_total",
		"Holder changes this exporter saw on its watch since it first saw the Lease.", leaseLabels, nil)
	descObservedRenew = prometheus.NewDesc("lease_observed_renew_timestamp_seconds",
		"Unix time, by the exporter's clock, at which it saw spec.renewTime change.", leaseLabels, nil)

	descSynced = prometheus.NewDesc("lease_exporter_cache_synced",
		"Whether the informer cache has completed its initial list (1) or not (0).", nil, nil)
	descLeases = prometheus.NewDesc("lease_exporter_leases",
		"Number of Leases the exporter exports, by class.", []string{"class"}, nil)
	descStale = prometheus.NewDesc("lease_exporter_watch_stale_seconds",
		"Seconds the exporter's view may lag the API server: 0 while the watch is open and caught up.", nil, nil)

	allDescs = []*prometheus.Desc{descInfo, descHeld, descRenew, descAcquire, descDuration, descExpiry,
		descRenewAge, descTransitions, descObservedChanges, descObservedRenew, descSynced, descLeases, descStale}
)
