// LeaseMissing: a lock declared with --expect does not exist. Every other per-lease alert
// reads a lock's own series, which vanish with the lock, so only a series per declared lock
// (lease_expected_present) can say that it is gone. Same gating as LeaseNoLeader: fresh
// replicas only (a replica whose watch is down keeps its last view, which says nothing about
// now, and drops out; the alert's `for` clock restarts after such an outage rather than
// count it), and a lock present for any fresh replica is present (max). 5m: electors create
// their lock within seconds of starting, and a deleted lock is recreated at the next retry
// period, so five minutes without one is a controller that is not running or not electing.
function(c, lib)
  local p = lib.p;
  [
    lib.alert('LeaseMissing', 'critical', |||
      (
        max %(without)s (
            lease_expected_present{%(sel)s}
          and %(onInstance)s
            %(fresh)s
        ) == 0
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseMissing"}
    ||| % p,
              'Expected lock {{ $labels.namespace }}/{{ $labels.lease }} ({{ $labels.kind }}) does not exist.',
              // The grace period in words would go stale when a _config's `for` changes it.
              'The {{ $labels.kind }} lock {{ $labels.namespace }}/{{ $labels.lease }}, declared with --expect, has not existed for longer than the alert\'s grace period'
              + '; last holder: ' + lib.holder('none seen in the last hour')
              + '. Whatever elects through it is not running, has not elected yet, or uses another lock.'),
  ]
