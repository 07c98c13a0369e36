// grafanaDashboards: the Grafana JSON in this directory, parameterised by _config.
// The dashboards stay JSON, not jsonnet: a maintainer can edit one in Grafana and paste the
// export back, and the mixin only changes the few things _config governs, listed here:
// - refresh and default time range;
// - the job variable's selector (dashboardSelector);
// - the cluster label's name in every query (clusterLabel). The sources spell it `cluster`
//   in three shapes only, all rewritten below: the matcher cluster=~"$cluster", the first
//   label of a label list "(cluster, ", and the label_join argument "cluster", . mixin/render's
//   multi-cluster test renders with another name and parses every query for a leftover;
// - a link to the lock's status page on the lease-detail dashboard (statusPageURL);
// - multi-cluster mode (showMultiCluster): the cluster variable becomes a visible
//   single-value choice without "All", and the matcher an equality, so every aggregation a
//   panel does is over one cluster. The fleet overview (fleet.libsonnet) is added.
function(c)
  local L = c.clusterLabel;
  local multi = c.showMultiCluster;
  local rename(s) =
    if L == 'cluster' then s
    else std.strReplace(std.strReplace(std.strReplace(s,
      'cluster=~"$cluster"', L + '=~"$cluster"'),
      '(cluster, ', '(' + L + ', '),
      '"cluster", ', '"' + L + '", ');
  local q(s) =
    local r = rename(s);
    if multi then std.strReplace(r, L + '=~"$cluster"', L + '="$cluster"') else r;

  local target(t) = t + (if std.objectHas(t, 'expr') then { expr: q(t.expr) } else {});
  local panel(p) = p
    + (if std.objectHas(p, 'targets') then { targets: [target(t) for t in p.targets] } else {})
    + (if std.objectHas(p, 'panels') then { panels: [panel(x) for x in p.panels] } else {});

  local variable(v) =
    if v.name == 'job' && c.dashboardSelector != '' then
      v { query: 'label_values(lease_exporter_build_info{%s}, job)' % c.dashboardSelector }
    else if v.name == 'cluster' then
      v { query: 'label_values(lease_exporter_build_info, %s)' % L }
      + (if multi then {
           includeAll: false,
           multi: false,
           hide: 0,
           allValue:: null,
           current:: null,
           description: 'The cluster to show (label %s, which the global query layer adds). Every panel shows this cluster only; the fleet overview compares them.' % L,
         } else {})
    else if std.objectHas(v, 'query') && std.isString(v.query) then v { query: q(v.query) }
    else v;

  local timing(file, d) = d {
    refresh: c.dashboardRefresh,
    time+: { from: c.dashboardTimeFrom[file] },
  };
  // statusPageURL: the lease-detail dashboard links to the status page of the lock it shows.
  local statusPage = std.strReplace(std.rstripChars(c.statusPageURL, '/'), '{{ $labels.' + L + ' }}', '${cluster}');
  local links(file, d) =
    if file != 'lease-detail.json' || statusPage == '' then {}
    else { links: d.links + [{
      title: 'Status page',
      type: 'link',
      url: statusPage + '/leases/${namespace}/${lease}',
      asDropdown: false,
      includeVars: false,
      keepTime: false,
      icon: 'info',
      targetBlank: true,
      tooltip: "The exporter's status page of this lock: its holders as a timeline, its history and judgement",
    }] };
  local dashboard(file, d) = timing(file, d) {
    templating+: { list: [variable(v) for v in d.templating.list] },
    panels: [panel(p) for p in d.panels],
  } + links(file, d);

  local sources = {
    'exporter-health.json': import 'exporter-health.json',
    'lease-detail.json': import 'lease-detail.json',
    'leases-overview.json': import 'leases-overview.json',
    'node-heartbeats.json': import 'node-heartbeats.json',
  };
  { [f]: dashboard(f, sources[f]) for f in std.objectFields(sources) }
  // Built for _config already: the per-cluster rewrites above are not for it.
  + (if multi then { 'fleet-overview.json': timing('fleet-overview.json', (import 'fleet.libsonnet')(c)) } else {})
