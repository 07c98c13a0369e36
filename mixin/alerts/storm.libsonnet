// LeaseRenewStorm: a lock written far faster than any sane elector renews. client-go's
// electors (kube-scheduler, kube-controller-manager, controller-runtime) renew every retry
// period, 2s by default: 0.5 writes a second; the Python client's example, every 5s; a
// kubelet its node Lease every 10s. Above maxRenewalsPerSecond (1: twice the fastest default)
// for the window and then `for` more, a lock costs the API server and etcd writes for
// nothing: a retry period in milliseconds, or two processes fighting under one identity.
// lease_observed_renewals_total counts writes the exporter saw; max, not sum: every replica
// counts the same writes. No staleness guard: a frozen counter reads 0, and a relist after a
// watch gap counts one write, so an outage can only under-count. 10m: a restart's burst of
// retries is not a storm.
function(c, lib)
  local s = c.alerts.LeaseRenewStorm, p = lib.p;
  [
    lib.alert('LeaseRenewStorm', 'warning', |||
      (
        max %(without)s (
          rate(lease_observed_renewals_total{%(sel)s}[%(window)s])
        ) > %(max)s
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseRenewStorm"}
    ||| % (p { window: s.window, max: s.maxRenewalsPerSecond }),
              'Lease {{ $labels.namespace }}/{{ $labels.lease }} is renewed far too often.',
              'Lease {{ $labels.namespace }}/{{ $labels.lease }} has been written {{ printf "%.1f" $value }} times a second over the last '
              + lib.words(s.window) + ' and more, by ' + lib.holder('an unknown holder')
              + '; electors with default settings renew every 2 seconds (0.5 a second). Look for a retry period in milliseconds, or two processes renewing under one identity: each write costs the API server and etcd.'),
  ]
