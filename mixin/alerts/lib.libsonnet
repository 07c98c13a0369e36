// The pieces every alert expression is built from, derived from _config once, so that the
// rules read as PromQL with a few %(name)s holes rather than as string concatenation.
function(c) {
  local multi = c.showMultiCluster,
  local L = c.clusterLabel,
  // `on (...)` lists: in multi-cluster mode the cluster label leads every one of them, so that
  // a global ruler (Thanos Ruler, Mimir) never matches one cluster's series with another's
  // (two clusters' exporters may well share a job and a Pod IP).
  local on(labels) = 'on (' + std.join(', ', (if multi then [L] else []) + labels) + ')',
  on(labels):: on(labels),
  // `by (...)` lists, with the cluster label first in multi-cluster mode, as `on` above.
  by(labels):: 'by (' + std.join(', ', (if multi then [L] else []) + labels) + ')',

  // Holes for `expr % p`.
  p: {
    sel: c.exporterSelector,
    without: 'without (' + std.join(', ', c.replicaLabels) + ')',
    onInstance: on(['job', 'instance']),
    onLease: on(['namespace', 'lease']),
    onInstanceLease: on(['job', 'instance', 'namespace', 'lease']),
    onCandidate: on(['namespace', 'lease', 'candidate']),
    // The fresh-replica guard every per-lease alert and recording applies (watch open, cache
    // synced), as one expression written here only: `and %(onInstance)s %(fresh)s`. A target
    // that fails its scrape or vanishes drops out of it too, since Prometheus marks its
    // series stale.
    fresh: '(lease_exporter_watch_up{%(sel)s} == 1 and %(on)s lease_exporter_cache_synced{%(sel)s} == 1)'
           % { sel: c.exporterSelector, on: on(['job', 'instance']) },
  },

  // A template query's selector head and its arguments, for descriptions that look up the
  // holder: in multi-cluster mode it also matches the alert's cluster (empty where a
  // per-cluster Prometheus evaluates the rule, which matches series without the label).
  lookup(metric, labels, extra): {
    local ls = (if multi then [L] else []) + labels,
    selector: metric + '{' + std.join(',', [l + '="%s"' for l in ls]) + extra + '}',
    args: std.join(' ', ['$labels.' + l for l in ls]),
  },

  // The description fragment that names a Lease's most recent holder (see alerts.libsonnet).
  holder(otherwise)::
    local q = self.lookup('lease_info', ['job', 'namespace', 'lease', 'kind'], ',holder!=""');
    '{{ with printf `sort_desc(max by (holder) (max_over_time(timestamp( ' + q.selector
    + ')[1h:1m])))` ' + q.args + ' | query }}{{ . | first | label "holder" }}{{ else }}'
    + otherwise + '{{ end }}',

  // A description fragment for a Lease without a leader in a coordinated election: when its
  // spec.preferredHolder names a candidate with no fresh LeaseCandidate (none renewed within
  // staleSeconds), the API server keeps preferring a component that does not answer and
  // nobody else may take the Lease (k/k #138066). Empty otherwise, and without coordination.
  stalledCoordination::
    local preferred = self.lookup('lease_info', ['job', 'namespace', 'lease'], ',preferred_holder!=""');
    local fresh = self.lookup('lease_candidate_observed_renew_timestamp_seconds', ['job', 'namespace', 'lease'], '');
    '{{ with printf `label_replace(max by (preferred_holder) (' + preferred.selector + '), "candidate", "$1", "preferred_holder", "(.+)")'
    + ' unless on (candidate) (time() - max by (candidate) (' + fresh.selector + ') < '
    + c.alerts.LeaseCandidateNotRenewing.staleSeconds + ')` ' + preferred.args + ' ' + fresh.args
    + ' | query }}{{ with . | first }} Coordinated leader election is stalled: the API server prefers {{ .Labels.candidate }} as holder, and it has no LeaseCandidate renewed in the last '
    + self.words(std.toString(c.alerts.LeaseCandidateNotRenewing.staleSeconds / 60) + 'm')
    + ' (stale or deleted), so nobody will be elected until it comes back or spec.preferredHolder is cleared.{{ end }}{{ end }}',

  runbook(name): c.runbookURLPattern % name,

  // "5m" -> "5 minutes", for descriptions that state an alert's window in words.
  words(d)::
    local units = { s: 'second', m: 'minute', h: 'hour', d: 'day' };
    local n = std.substr(d, 0, std.length(d) - 1), u = units[d[std.length(d) - 1]];
    n + ' ' + u + (if n == '1' then '' else 's'),

  // The alert's rule: `for` from _config ('' and '0' mean none), severity label,
  // annotations with the runbook. `extra` fills the rest (expr, summary, description).
  // A Prometheus duration such as 90s or 1h30m: digits, then units, ending in a unit.
  local isDuration(d) =
    std.length(d) > 1 && std.member('0123456789', d[0]) && std.member('smhdwy', d[std.length(d) - 1])
    && std.all([std.member('0123456789smhdwy', ch) for ch in std.stringChars(d)]),

  alert(name, severity, expr, summary, description):
    local f = c.alerts[name]['for'];
    assert f == '' || f == '0' || isDuration(f) : 'alerts.%s.for: %s is not a Prometheus duration' % [name, f];
    {
    alert: name,
    expr: expr,
    [if std.member(['', '0'], f) then null else 'for']: f,
    labels: { severity: severity },
    annotations: {
      summary: summary,
      description: description,
      runbook_url: $.runbook(name),
    },
  },
}
