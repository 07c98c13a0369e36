// prometheusAlerts: the two rule groups, built from _config.
function(c)
  local lib = (import 'lib.libsonnet')(c);
  // Exemptions go first in the per-lease group: rules of one group run in order at the same
  // timestamp, so an exemption exists before the first alert evaluation (a separate group's
  // start-up lag would show, since LeaseFrequentTransitions has no `for` to hide it). One
  // recording rule per exempt Lease; without `alert` it is exempt from every per-lease alert.
  local exempt(e) = {
    record: 'lease_exporter:alert_exempt',
    expr: 'vector(1)',
    labels: { namespace: e.namespace, lease: e.lease }
            + (if std.objectHas(e, 'alert') then { alert: e.alert } else {})
            + (if std.objectHas(e, 'cluster') then { [c.clusterLabel]: e.cluster } else {}),
  };
  // With statusPageURL set, each per-lease alert links to its lock's status page.
  local base = std.rstripChars(c.statusPageURL, '/');
  local statusPage(r) =
    if base == '' || !std.objectHas(r, 'alert') then r
    else r { annotations+: {
      status_page: base + '/leases/{{ $labels.namespace }}/{{ $labels.lease }}{{ with $labels.kind }}?kind={{ . }}{{ end }}',
    } };
  local leases = [statusPage(r) for r in (import 'leases.libsonnet')(c, lib) + (import 'participants.libsonnet')(c, lib)];
  local known = [r.alert for r in leases if std.objectHas(r, 'alert')];
  local bad = [e for e in c.exemptions if std.objectHas(e, 'alert') && !std.member(known, e.alert)];
  assert bad == [] : 'exemptions: %s is not a per-lease alert (want one of %s)' % [bad[0].alert, std.join(', ', known)];
  local exporter = (import 'exporter.libsonnet')(c, lib);
  // A misspelt key in _config.alerts would otherwise tune nothing, silently.
  local all = known + [r.alert for r in exporter if std.objectHas(r, 'alert')];
  local unknown = std.setDiff(std.set(std.objectFields(c.alerts)), std.set(all));
  assert unknown == [] : 'alerts: %s is not an alert of this mixin (want one of %s)' % [unknown[0], std.join(', ', all)];
  {
    groups: [
      { name: 'lease-exporter.leases', rules: [exempt(e) for e in c.exemptions] + leases },
      { name: 'lease-exporter.exporter', rules: exporter },
    ],
  }
