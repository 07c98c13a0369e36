// The fleet overview (multi-cluster mode only): one row of numbers per cluster, for a platform
// team looking at many clusters through one query layer. Written in jsonnet rather than
// exported from Grafana because every query is built around the configurable cluster label;
// its panels reuse the overview's panel shapes, so they pass the same schema checks.
//
// Each count ends in `or on (L) (0 * group by (L) (lease_exporter_build_info))`: a cluster
// with nothing wrong reads 0 instead of vanishing from the panel.
function(c)
  local L = c.clusterLabel;
  local overview = import 'leases-overview.json';
  local stat = overview.panels[1];  // "Leaders without a valid holder"
  local series = overview.panels[7];  // "Renew age / lease duration"
  local sel(extra) = '%sjob=~"$job", %s=~"$cluster"' % [extra, L];
  local zero = ' or on (%s) (0 * group by (%s) (lease_exporter_build_info{%s}))' % [L, L, sel('')];
  local lease = '%s, namespace, lease, kind' % L;
  local leaderless = 'count by (%s) (max by (%s) (lease_held{%s}) == 0)' % [L, lease, sel('class="leader-election", ')];
  local lagging = |||
    count by (%(L)s) (
      max by (%(lease)s) (timestamp(lease_observed_renew_timestamp_seconds{%(sel)s}) - lease_observed_renew_timestamp_seconds{%(sel)s})
      /
      max by (%(lease)s) (lease_duration_seconds{%(sel)s})
      > 0.5
    )
  ||| % { L: L, lease: lease, sel: sel('class="leader-election", ') };
  local skewed = |||
    count by (%(L)s) (
      abs(avg by (%(lease)s) (lease_holder_clock_skew_seconds{%(sel)s}))
      > clamp(0.25 * max by (%(lease)s) (lease_duration_seconds{%(sel)s}), 2, 30)
    )
  ||| % { L: L, lease: lease, sel: sel('class!="node-heartbeat", ') };
  local watching = 'sum by (%s) (lease_exporter_watch_up{%s} * lease_exporter_cache_synced{%s})' % [L, sel(''), sel('')];
  local exporters = 'count by (%s) (up{%s})' % [L, sel('')];

  local target(expr, legend, instant) = stat.targets[0] {
    expr: expr,
    legendFormat: legend,
    range: !instant,
    instant: instant,
  };
  local statPanel(id, x, title, description, expr, red) = stat {
    id: id,
    title: title,
    description: description,
    gridPos: { x: x, y: 0, w: 6, h: 6 },
    fieldConfig+: { defaults+: { thresholds+: { steps: [{ color: 'green', value: null }, { color: 'red', value: red }] } } },
    targets: [target(expr, '{{%s}}' % L, true)],
  };
  local seriesPanel(id, x, y, title, description, unit, targets) = series {
    id: id,
    title: title,
    description: description,
    gridPos: { x: x, y: y, w: 12, h: 8 },
    fieldConfig+: { defaults+: { unit: unit, thresholds+: { steps: [{ color: 'green', value: null }] } } },
    targets: targets,
  };

  overview {
    uid: 'lease-exporter-fleet',
    title: 'Leases fleet overview',
    description: 'Every cluster side by side, as a global query layer (Thanos Query, Mimir) sees them through the %s label: leaderless locks, lagging renewals, skewed holders and the exporters\' watch health per cluster. Open a cluster in the other dashboards to see which locks.' % L,
    tags: ['lease-exporter', 'kubernetes', 'fleet'],
    templating+: {
      list: [
        if v.name == 'cluster' then v {
          query: 'label_values(lease_exporter_build_info, %s)' % L,
          includeAll: true,
          allValue: '.*',
          multi: true,
          description: 'The clusters to compare (label %s). All shows every cluster the query layer knows.' % L,
        } else v
        for v in overview.templating.list
      ],
    },
    panels: [
      statPanel(1, 0, 'Leaderless locks', 'Per cluster: leader-election Leases with no valid holder right now (lease_held == 0 on every exporter replica). Above 0 means some controller in that cluster has no active leader; the Leases overview of that cluster says which.', leaderless + zero, 1),
      statPanel(2, 6, 'Lagging renewals', 'Per cluster: held leader-election Leases last renewed more than half their duration ago, as LeaseRenewalLagging judges them. Above 0 means a leader is about to lose its Lease.', lagging + zero, 1),
      statPanel(3, 12, 'Skewed holders', "Per cluster: Leases whose holder's clock is off by more than a quarter of the lease duration (2s to 30s), as LeaseHolderClockSkew judges them. Above 0 means a node in that cluster needs its time synchronisation fixed.", skewed + zero, 1),
      statPanel(4, 18, 'Exporters watching', 'Per cluster: exporter replicas with an open watch and a synced cache. 0 means nothing watches that cluster\'s Leases and its lease alerts are blind; compare with the scraped replicas below.', watching, 0) {
        fieldConfig+: { defaults+: { thresholds+: { steps: [{ color: 'red', value: null }, { color: 'green', value: 1 }] } } },
      },
      seriesPanel(5, 0, 6, 'Leaderless locks over time', 'Per cluster, over the selected range: how many leader-election Leases had no valid holder. A step in one cluster only is that cluster\'s trouble, not the query layer\'s.', 'none',
                  [target(leaderless + zero, '{{%s}}' % L, false)]),
      seriesPanel(6, 12, 6, 'Exporter watch health', 'Per cluster: exporter replicas watching (open watch, synced cache) against replicas scraped. The lines part when a replica loses its watch or its cache.', 'none',
                  [target(watching, '{{%s}} watching' % L, false), target(exporters, '{{%s}} scraped' % L, false) { refId: 'B' }]),
    ],
  }
