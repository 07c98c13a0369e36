// LeaseHolderClockSkew, in its own file for its length: the holder's clock against the
// exporter's, measured on live renewals (renewTime - moment seen; a healthy holder reads
// -0.3..0 s from watch latency and batching). Electors and lease_held do not care; tools
// judging renewTime by their own clock do.
// Threshold clamp(0.25 x duration, 2s, 30s): at a quarter of the duration, a renewal
// judged by renewTime already reads 0.25 + 0.13 (client-go's cadence) of the duration
// old, short of the usual "half the duration" lag thresholds, so this warns before
// such tools misjudge the Lease; 2s stays clear of watch latency on a loaded API
// server; 30s caps hour-long Leases (apiserver identity) at half of the 1m leeway JWT
// validation allows, beyond which the node's broken time breaks more than Leases.
// Every fresh replica must agree on the direction: min for "ahead", max for "behind",
// so one exporter replica with a wrong clock (it shifts every holder by its own error)
// cannot page; a sole replica cannot tell, see the runbook. Only held Leases: a dead
// holder's last skew says nothing now. 5m: a stalled watch delivering a few renewals
// late is a spike, broken time synchronisation lasts.
function(c, lib)
  local s = c.alerts.LeaseHolderClockSkew;
  // The tolerance comes from the Lease's duration as fresh replicas see it, like the skew: a
  // replica whose watch is down keeps a duration the Lease may no longer have.
  local duration = |||
    max %(without)s (
                lease_duration_seconds{%(sel)s}
              and %(onInstance)s
                %(fresh)s
            )
  ||| % lib.p;
  local p = lib.p { fraction: s.durationFraction, lo: s.minSeconds, hi: s.maxSeconds, duration: std.rstripChars(duration, '\n') };
  local tolerance = if s.durationFraction == 0.25 then 'a quarter' else std.toString(s.durationFraction);
  [
    lib.alert('LeaseHolderClockSkew', 'warning', |||
      (
        (
            min %(without)s (
                lease_holder_clock_skew_seconds{%(sel)s}
              and
                (lease_held{%(sel)s} == 1)
              and %(onInstance)s
                %(fresh)s
            )
          > clamp(%(fraction)s * %(duration)s, %(lo)s, %(hi)s)
        )
        or
        (
            max %(without)s (
                lease_holder_clock_skew_seconds{%(sel)s}
              and
                (lease_held{%(sel)s} == 1)
              and %(onInstance)s
                %(fresh)s
            )
          < -clamp(%(fraction)s * %(duration)s, %(lo)s, %(hi)s)
        )
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseHolderClockSkew"}
    ||| % p,
              'The holder of Lease {{ $labels.namespace }}/{{ $labels.lease }} has a skewed clock.',
              'The clock of ' + lib.holder('an unknown holder')
              + ", holder of Lease {{ $labels.namespace }}/{{ $labels.lease }}, runs {{ if gt $value 0.0 }}{{ $value | humanizeDuration }} ahead of{{ else }}{{ $value | humanizeDuration | reReplaceAll \"^-\" \"\" }} behind{{ end }} the exporter's on every exporter replica, more than the Lease tolerates ("
              + tolerance + ' of its duration, ' + s.minSeconds + 's to ' + s.maxSeconds
              + "s). Electors and lease_held are unaffected; tools that judge renewTime by their own clock misjudge this Lease, and the holder's node needs its time synchronisation fixed."),
  ]
