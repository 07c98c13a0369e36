// The per-lease alerts (group lease-exporter.leases). Conventions they keep, which
// mixin/render/rules_lint_test.go checks in the rendering:
// - every metric selector starts with the exporter selector (_config.exporterSelector);
// - exporter replicas are told apart only by _config.replicaLabels, and every alert
//   aggregates them away with `without (...)`, so two HA replicas give one alert per lease;
// - each alert ends in "unless on (namespace, lease) lease_exporter:alert_exempt{...}", the
//   exemption hook (_config.exemptions);
// - only the default (lean) metric set of docs/metrics.md, never a --metrics.extended series;
//   renew age is computed here, from the sample's timestamp;
// - the thresholds that judge a lock (the skew tolerance, the candidate freshness) default to
//   the exporter's judgement, lock/judgement.go (lock/judgement_rules_test.go compares them).
//
// Alert labels deliberately do not include the holder: it churns, and a changing label set
// restarts an alert's `for` clock. Descriptions look the holder up with a template query
// instead (lib.holder): the most recently seen non-empty holder within the last hour, of the
// same lock (kind="" matches series without a kind label).
//
// No recording rules: every query here is a per-sample function of series Prometheus already
// stores, so a recorded copy would cost series without saving work (docs/alerts.md). The
// participant join (participants.libsonnet) records its two sides once, for its alerts.
function(c, lib)
  local a = c.alerts, p = lib.p;
  [
  // lease_held is judged as the electors judge: from when the exporter saw the record
  // change, never from the holder's renewTime, so a holder clock running behind does not
  // page and one running ahead does not hide an outage. Fresh replicas only (watch open
  // and cache synced): a broken watch freezes lease_held at its last value, which says
  // nothing about now. If any fresh replica sees a valid holder the lease is led (max).
  // 2m outlasts graceful handoffs (seconds), a crashed sole replica's restart plus one
  // retry period, and a start-up that saw a far-behind holder's renewTime before its next
  // renewal (seconds), yet pages within ~3 min of a real outage.
  lib.alert('LeaseNoLeader', 'critical', |||
    (
      max %(without)s (
          lease_held{%(sel)s, class="leader-election"}
        and %(onInstance)s
          %(fresh)s
      ) == 0
    )
    unless %(onLease)s
      lease_exporter:alert_exempt{alert=~"|LeaseNoLeader"}
  ||| % p,
            'Leader-election Lease {{ $labels.namespace }}/{{ $labels.lease }} has no leader.',
            "Lease {{ $labels.namespace }}/{{ $labels.lease }} has had no valid holder (holder released or lease expired) for longer than the alert's grace period; last holder: "
            + lib.holder('none seen in the last hour')
            + '. Whatever elects through this Lease is not doing its leader-only work.'
            + lib.stalledCoordination),

  // Early warning before expiry: 0.5 x duration is well past a healthy renewal cadence
  // (client-go renews every 2s of 15s, the kubelet every 10s of 40s) and before client-go's
  // renew deadline (2/3 of the duration), after which the leader gives up.
  // Renew age = sample time - observed renew time: both on the exporter's/Prometheus'
  // clocks, never the holder's, and taken at the scrape, not at evaluation. So a sample
  // that stops arriving without a staleness marker (Prometheus restarted, target lost)
  // keeps the age it had instead of growing for the 5m lookback, as time() - ... would.
  // min: every fresh replica must agree; each is judged at its own scrape. 1m rides out a
  // single slow renewal; leases shorter than ~2.5m expire first and are LeaseNoLeader's
  // business. Node Leases export neither lease_held nor lease_duration_seconds by default
  // (they are summed up, docs/metrics.md), so this covers them only with
  // --metrics.node-heartbeats=per-lease and --metrics.extended.
  lib.alert('LeaseRenewalLagging', 'warning', |||
    (
      min %(without)s (
          (
              (
                  timestamp(lease_observed_renew_timestamp_seconds{%(sel)s})
                - lease_observed_renew_timestamp_seconds{%(sel)s}
              )
            / lease_duration_seconds{%(sel)s}
          )
        and
          (lease_held{%(sel)s} == 1)
        and %(onInstance)s
          %(fresh)s
      ) > %(fraction)s
    )
    unless %(onLease)s
      lease_exporter:alert_exempt{alert=~"|LeaseRenewalLagging"}
  ||| % (p { fraction: a.LeaseRenewalLagging.durationFraction }),
            'Lease {{ $labels.namespace }}/{{ $labels.lease }} is renewed late.',
            'Lease {{ $labels.namespace }}/{{ $labels.lease }} is still held by '
            + lib.holder('an unknown holder')
            + ' but was last renewed {{ $value | humanizePercentage }} of its lease duration ago; it expires and leadership moves unless the holder renews soon.'),

  // The merged counter: +1 for each new non-empty holder the exporter observes, or the rise
  // of spec.leaseTransitions if larger, so it also counts electors that never write that
  // field (Python's ConfigMapLock). It restarts at 0 with the exporter and on recreation;
  // increase() reads a drop as a reset (+0, never the old value). A restart can only lose
  // the changes made while no exporter was running. max, not sum: every replica reports
  // the same changes. No staleness guard: a frozen counter can only under-count. No
  // `for`: the window is the debounce, and a `for` shorter than the window would only
  // delay, not filter, a burst. ">= 6", not "> 5": increase() extrapolates to the window's
  // edges, so 5 real changes read as 5.1 on a real Prometheus (caught by test/e2e;
  // promtool's aligned samples cannot show it).
  lib.alert('LeaseFrequentTransitions', 'warning', |||
    (
      max %(without)s (
        increase(lease_observed_holder_changes_total{%(sel)s}[%(window)s])
      ) >= %(min)s
    )
    unless %(onLease)s
      lease_exporter:alert_exempt{alert=~"|LeaseFrequentTransitions"}
  ||| % (p { window: a.LeaseFrequentTransitions.window, min: a.LeaseFrequentTransitions.minChanges }),
            'Lease {{ $labels.namespace }}/{{ $labels.lease }} changes holder frequently.',
            'Lease {{ $labels.namespace }}/{{ $labels.lease }} changed holder about {{ printf "%.0f" $value }} times in the last '
            + lib.words(a.LeaseFrequentTransitions.window) + '; latest holder: '
            + lib.holder('none seen in the last hour')
            + '. Candidates keep losing the Lease (crash loops, renewals timing out, clock or network trouble).'),
] + (import 'missing.libsonnet')(c, lib) + (import 'skew.libsonnet')(c, lib) + (import 'coordinated.libsonnet')(c, lib)
  + (import 'storm.libsonnet')(c, lib)
