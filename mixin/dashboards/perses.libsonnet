// persesDashboards: the same dashboards for Perses, translated from grafanaDashboards after
// _config has been applied, so one source (the Grafana JSON beside this file and the
// rewrites in dashboards.libsonnet) gives both, with the same queries, legends, variables,
// layout and multi-cluster mode. Nothing here restates a query.
//
// The panels map to the Perses plugins whose schemas these machines can get (Prometheus,
// TimeSeriesChart, StatChart; hack/perses/plugins.sh says why Table, BarChart and
// StatusHistoryChart are missing). Perses 0.52's Prometheus plugin also has no instant query:
// every query runs over the dashboard's range, and a panel shows each series the range holds.
// So a Grafana panel that lists series by name as they are now (a table, a top-10 bar gauge,
// a stat showing its series' names) becomes a time series whose legend is a table of each
// series' last value: a series that ended within the range (a former holder, a lock that left
// the top 10) is seen ending, instead of being listed as if current.
//   timeseries        -> TimeSeriesChart (legend calculations, thresholds when Grafana draws them)
//   stat              -> StatChart (value mappings, thresholds, the calculation)
//   stat, text "name" -> TimeSeriesChart with its series' names beside it (Version, Holder)
//   bargauge          -> TimeSeriesChart with a table legend
//   state-timeline    -> TimeSeriesChart of the same 0/1 series, one line per holder, named
//                        by the labels the query keeps
//   table             -> TimeSeriesChart with a table legend, one series per row and column,
//                        named by the row's labels and the column's title; date columns are
//                        left out (an epoch on a value axis flattens every other line)
// docs/dashboards.md ("What differs from Grafana") lists what each loses. A Grafana setting
// this file does not know (a unit, a panel type, a legend calculation, a time range) fails the
// rendering: map it here.
function(c, grafana)
  local formats = {
    s: { unit: 'seconds' },
    dtdurations: { unit: 'seconds' },
    bytes: { unit: 'bytes' },
    percentunit: { unit: 'percent-decimal' },
    cps: { unit: 'counts/sec' },
    ops: { unit: 'ops/sec' },
    none: { unit: 'decimal' },
  };
  local formatOf(p, d) =
    local unit = std.get(d, 'unit', 'none');
    if std.objectHas(formats, unit) then formats[unit]
    else error 'perses.libsonnet: no Perses format for the unit %s (panel %s): map it here' % [unit, p.title];

  // Grafana's named colours, as Perses wants them (mappings accept only #rgb).
  local colour(n) = {
    green: '#56a64b',
    red: '#e02f44',
    orange: '#ff780a',
    yellow: '#f2cc0c',
    blue: '#3274d9',
    purple: '#a352cc',
    text: '#ccccdc',
  }[n];
  local colourOf(n) = if std.startsWith(n, '#') then n else colour(n);

  local calculations = {
    lastNotNull: 'last-number',
    last: 'last',
    firstNotNull: 'first-number',
    first: 'first',
    mean: 'mean',
    max: 'max',
    min: 'min',
    sum: 'sum',
  };
  local calculationOf(p, name) =
    if std.objectHas(calculations, name) then calculations[name]
    else error 'perses.libsonnet: no Perses calculation for %s (panel %s): map it here' % [name, p.title];
  local calculation(p) =
    local calcs = std.get(std.get(std.get(p, 'options', {}), 'reduceOptions', {}), 'calcs', ['lastNotNull']);
    calculationOf(p, if std.length(calcs) > 0 then calcs[0] else 'lastNotNull');

  local defaults(p) = std.get(std.get(p, 'fieldConfig', {}), 'defaults', {});

  local thresholds(p) =
    local steps = std.get(std.get(defaults(p), 'thresholds', {}), 'steps', []);
    local base = [s for s in steps if s.value == null];
    local rest = [s for s in steps if s.value != null];
    if std.length(rest) == 0 then {}
    else { thresholds: {
      mode: 'absolute',
      [if std.length(base) > 0 then 'defaultColor']: colourOf(base[0].color),
      steps: [{ value: s.value, color: colourOf(s.color) } for s in rest],
    } };

  // A time series draws its thresholds only when Grafana's thresholdsStyle says so (off by
  // default); a stat always colours by them.
  local drawnThresholds(p) =
    local style = std.get(std.get(std.get(defaults(p), 'custom', {}), 'thresholdsStyle', {}), 'mode', 'off');
    if style == 'off' then {} else thresholds(p);

  local mappings(p) =
    local ms = std.flattenArrays([
      [
        {
          kind: 'Value',
          spec: {
            value: k,
            result: { value: m.options[k].text } + (if std.objectHas(m.options[k], 'color') then { color: colourOf(m.options[k].color) } else {}),
          },
        }
        for k in std.objectFields(m.options)
      ]
      for m in std.get(defaults(p), 'mappings', [])
      if m.type == 'value'
    ]);
    if std.length(ms) == 0 then {} else { mappings: ms };

  // The labels a table's (or state timeline's) rows are keyed by: the first `by (...)` of its
  // first query, less the cluster label (one cluster's rows, or a column of their own).
  local rowLabels(p, expr) =
    local at = std.findSubstr('by (', expr);
    if std.length(at) == 0 then error 'perses.libsonnet: panel %s: its first query has no `by (...)` to name its rows by' % p.title
    else
      local rest = std.substr(expr, at[0] + 4, std.length(expr));
      local list = std.substr(rest, 0, std.findSubstr(')', rest)[0]);
      [std.stripChars(l, ' ') for l in std.split(list, ',') if std.stripChars(l, ' ') != c.clusterLabel];

  // A table's column titles come from its organize transformation ("Value #A": "Held").
  local columnTitle(p, t) =
    local renames = std.flattenArrays([
      [std.get(std.get(x, 'options', {}), 'renameByName', {})]
      for x in std.get(p, 'transformations', [])
      if x.id == 'organize'
    ]);
    local key = 'Value #' + t.refId;
    local found = [r[key] for r in renames if std.objectHas(r, key)];
    if std.length(found) > 0 then found[0] else t.refId;

  // The unit a table's override gives a column, by its title.
  local columnUnit(p, title) =
    local units = std.flattenArrays([
      [x.value for x in o.properties if x.id == 'unit']
      for o in std.get(std.get(p, 'fieldConfig', {}), 'overrides', [])
      if o.matcher.id == 'byName' && o.matcher.options == title
    ]);
    if std.length(units) > 0 then units[0] else std.get(defaults(p), 'unit', 'none');
  local dateColumn(p, t) = std.startsWith(columnUnit(p, columnTitle(p, t)), 'dateTime');
  local query(expr, name) = {
    kind: 'TimeSeriesQuery',
    spec: { plugin: {
      kind: 'PrometheusTimeSeriesQuery',
      spec: { query: expr } + (if name != '' then { seriesNameFormat: name } else {}),
    } },
  };
  local targets(p) = [t for t in std.get(p, 'targets', []) if !std.get(t, 'hide', false)];
  // Columns in more than one unit share one axis and legend in Perses: plain numbers then,
  // each in its column's unit (seconds, 0-1 ratios, counts).
  local tableFormat(p) =
    local units = std.set([columnUnit(p, columnTitle(p, t)) for t in targets(p) if !dateColumn(p, t)]);
    if std.length(units) == 1 then formatOf(p, { unit: units[0] }) else { unit: 'decimal' };

  local rowName(p) = std.join('/', ['{{' + l + '}}' for l in rowLabels(p, targets(p)[0].expr)]);
  // Labels a query brings in with `group_left (...)` (the holder, next to a lock's validity)
  // name its series too: Grafana shows them as columns, and without them a former holder's
  // row would read like the current one's.
  local joinedLabels(expr) =
    local at = std.findSubstr('group_left (', expr);
    if std.length(at) == 0 then ''
    else
      local rest = std.substr(expr, at[0] + 12, std.length(expr));
      local list = std.substr(rest, 0, std.findSubstr(')', rest)[0]);
      ' (' + std.join(', ', ['{{' + std.stripChars(l, ' ') + '}}' for l in std.split(list, ',')]) + ')';
  local listsByName(p) = p.type == 'bargauge' || (p.type == 'stat' && std.get(std.get(p, 'options', {}), 'textMode', 'auto') == 'name');
  local queries(p) =
    if p.type == 'table' then [query(t.expr, rowName(p) + ' · ' + columnTitle(p, t) + joinedLabels(t.expr)) for t in targets(p) if !dateColumn(p, t)]
    else if p.type == 'state-timeline' then [query(t.expr, rowName(p)) for t in targets(p)]
    else [query(t.expr, std.get(t, 'legendFormat', '')) for t in targets(p)];

  local yAxis(p) =
    local d = defaults(p);
    { format: formatOf(p, d) }
    + (if std.get(d, 'min', null) != null then { min: d.min } else {})
    + (if std.get(d, 'max', null) != null then { max: d.max } else {});

  local legendOf(p) =
    local l = std.get(std.get(p, 'options', {}), 'legend', {});
    local calcs = std.get(l, 'calcs', []);
    if !std.get(l, 'showLegend', true) then {}
    else { legend: {
      position: if std.get(l, 'placement', 'bottom') == 'right' then 'right' else 'bottom',
      mode: if std.get(l, 'displayMode', 'list') == 'table' || std.length(calcs) > 0 then 'table' else 'list',
    } + (if std.length(calcs) > 0 then { values: [calculationOf(p, x) for x in calcs] } else {}) };

  // Each series over the range, and under it a table of their last values. Perses hides a
  // legend that leaves the chart too little room (under 50 px of height beside a bottom
  // legend, under 100 px of width beside a right one): a short panel (Version, Holder, 5 rows)
  // lists the series' names on the right instead, where they fit.
  local lastValues(p, format) = {
    kind: 'TimeSeriesChart',
    spec: {
      legend: if p.gridPos.h < 7 then { position: 'right', mode: 'list' }
      else { position: 'bottom', mode: 'table', values: ['last-number'] },
      yAxis: { format: format },
    },
  };

  local plugin(p) =
    local d = defaults(p);
    if p.type == 'timeseries' then {
      kind: 'TimeSeriesChart',
      spec: legendOf(p) + { yAxis: yAxis(p) } + drawnThresholds(p),
    }
    else if p.type == 'state-timeline' then {
      kind: 'TimeSeriesChart',
      spec: { legend: { position: 'bottom', mode: 'list' }, yAxis: { format: { unit: 'decimal' }, min: 0, max: 1 }, visual: { display: 'line', lineWidth: 2 } },
    }
    else if p.type == 'table' then lastValues(p, tableFormat(p))
    else if listsByName(p) then lastValues(p, formatOf(p, d))
    else if p.type == 'stat' then {
      kind: 'StatChart',
      spec: { calculation: calculation(p), format: formatOf(p, d) } + thresholds(p) + mappings(p),
    }
    else error 'perses.libsonnet: no Perses panel for the Grafana panel type %s (panel %s): map it here' % [p.type, p.title];

  local panelKey(p) = std.toString(p.id);
  local panel(p, links) = {
    kind: 'Panel',
    spec: {
      display: { name: p.title } + (if std.get(p, 'description', '') != '' then { description: p.description } else {}),
      plugin: plugin(p),
      queries: queries(p),
    } + (if std.length(links) > 0 then { links: links } else {}),
  };

  // Links. Perses 0.52 has panel links ({name, url, tooltip, renderVariables, targetBlank},
  // the variables in them rendered as in queries) and no dashboard links. So:
  //   panel link, data link -> a link of the same panel
  //   dashboard link        -> a link of the dashboard's first panel (top left), after its own
  //   type "dashboards"     -> one link per other dashboard with the tags, by title
  // A link to a Grafana dashboard (/d/<uid>/...) becomes one to its Perses twin in the same
  // project: /projects/${__project}/dashboards/<uid>, each variable both dashboards have as
  // var-<name>=${<name>:percentencode} (a multiple choice arrives as a,b, as Perses writes it),
  // and the time range as start=${__from}&end=${__to} (the window shown, in ms: Perses has no
  // variable for a relative range). Grafana's per-row values (${__data.fields.x},
  // ${__field.labels.x}) have no Perses counterpart: a panel links as a whole, so such a
  // variable is passed from the dashboard if it has one, and else chosen on the target (its
  // tooltip says so). A link elsewhere keeps its URL, variables rendered.
  local queryVars(g) = [v.name for v in g.templating.list if v.type == 'query'];
  local byUID = { [grafana[f].uid]: grafana[f] for f in std.objectFields(grafana) };
  local targetUID(g, url) =
    local uid = std.split(std.substr(url, 3, std.length(url)), '/')[0];
    if std.objectHas(byUID, uid) then uid
    else error 'perses.libsonnet: dashboard %s links to %s, which is not one of the rendered dashboards' % [g.title, url];
  local perRow(v) = std.startsWith(v, '${__data.') || std.startsWith(v, '${__field.') || std.startsWith(v, '${__value.');
  // What one parameter of a Grafana dashboard URL asks for: { vars, time, rowVars }.
  local param(g, l, p) =
    if p == '${__url_time_range}' then { time: true }
    else if std.startsWith(p, '${') && std.endsWith(p, ':queryparam}') then { vars: [std.substr(p, 2, std.length(p) - 14)] }
    else if std.startsWith(p, 'var-') && std.length(std.findSubstr('=', p)) > 0 && perRow(std.splitLimit(p, '=', 1)[1]) then
      { rowVars: [std.substr(std.splitLimit(p, '=', 1)[0], 4, std.length(p))] }
    else error 'perses.libsonnet: dashboard %s, link %s: no Perses form for the URL parameter %s: map it here' % [g.title, l.title, p];
  local dashboardLink(g, l, uid, asked) =
    local target = byUID[uid];
    local have = queryVars(g);
    local vars = [n for n in queryVars(target) if std.member(have, n) && (std.member(asked.vars, n) || std.member(asked.rowVars, n))];
    local chosen = [n for n in asked.rowVars if !std.member(have, n)];
    local params = ['var-%s=${%s:percentencode}' % [n, n] for n in vars]
                   + (if asked.time then ['start=${__from}', 'end=${__to}'] else []);
    {
      name: l.title,
      url: '/projects/${__project}/dashboards/' + uid + (if std.length(params) > 0 then '?' + std.join('&', params) else ''),
      renderVariables: true,
      targetBlank: std.get(l, 'targetBlank', false),
    } + (
      if std.length(chosen) > 0 then { tooltip: '%s: %s chosen there (a Perses link is the panel\'s, not a series\')' % [std.get(l, 'tooltip', l.title), std.join(' and ', chosen)] }
      else if std.get(l, 'tooltip', '') != '' then { tooltip: l.tooltip }
      else {}
    );
  // A Grafana link of type "link" (panel, dashboard) or a data link.
  local link(g, l) =
    local includeVars = std.get(l, 'includeVars', false);
    local keepTime = std.get(l, 'keepTime', false);
    if std.startsWith(l.url, '/d/') then
      local parts = std.splitLimit(l.url, '?', 1);
      local ps = if std.length(parts) > 1 then [param(g, l, p) for p in std.split(parts[1], '&')] else [];
      dashboardLink(g, l, targetUID(g, parts[0]), {
        vars: std.flattenArrays([std.get(x, 'vars', []) for x in ps]) + (if includeVars then queryVars(g) else []),
        rowVars: std.flattenArrays([std.get(x, 'rowVars', []) for x in ps]),
        time: keepTime || std.length([x for x in ps if std.get(x, 'time', false)]) > 0,
      })
    else if includeVars || keepTime then error 'perses.libsonnet: dashboard %s, link %s: includeVars or keepTime on a link outside Grafana: map it here' % [g.title, l.title]
    else {
      name: l.title,
      url: l.url,
      renderVariables: true,
      targetBlank: std.get(l, 'targetBlank', false),
    } + (if std.get(l, 'tooltip', '') != '' then { tooltip: l.tooltip } else {});
  local dashboardLinks(g) = std.flattenArrays([
    if l.type == 'link' then [link(g, l)]
    else if l.type == 'dashboards' then [
      dashboardLink(g, l { title: d.title }, d.uid, { vars: if std.get(l, 'includeVars', false) then queryVars(g) else [], rowVars: [], time: std.get(l, 'keepTime', false) })
      for d in std.sort([byUID[u] for u in std.objectFields(byUID)], function(d) d.title)
      if d.uid != g.uid && std.all([std.member(std.get(d, 'tags', []), t) for t in l.tags])
    ]
    else error 'perses.libsonnet: dashboard %s: no Perses form for a dashboard link of type %s: map it here' % [g.title, l.type]
    for l in std.get(g, 'links', [])
  ]);
  // A panel's own links, then its data links (the defaults' and each override's).
  local panelLinks(g, p) =
    local f = std.get(p, 'fieldConfig', {});
    [link(g, l) for l in std.get(p, 'links', [])]
    + [link(g, l) for l in std.get(std.get(f, 'defaults', {}), 'links', [])]
    + std.flattenArrays([[link(g, l) for l in x.value] for o in std.get(f, 'overrides', []) for x in o.properties if x.id == 'links']);
  // Two links to the same place (the Holder's "All leases" and the dashboard's "Leases
  // overview", say) are one in a panel's menu: the first is kept.
  local distinct(links) = std.foldl(function(acc, l) if std.member([x.url for x in acc], l.url) then acc else acc + [l], links, []);

  // label_values(SELECTOR, LABEL) or label_values(LABEL).
  local labelValues(v) =
    local inner = std.substr(v.query, std.length('label_values('), std.length(v.query) - std.length('label_values(') - 1);
    local comma = std.findSubstr(', ', inner);
    if std.length(comma) == 0 then { labelName: inner }
    else {
      labelName: std.substr(inner, comma[std.length(comma) - 1] + 2, std.length(inner)),
      matchers: [std.substr(inner, 0, comma[std.length(comma) - 1])],
    };
  local variable(v) = {
    kind: 'ListVariable',
    spec: {
      name: v.name,
      display: {
        name: std.get(v, 'label', v.name),
        hidden: std.get(v, 'hide', 0) == 2,
      } + (if std.get(v, 'description', '') != '' then { description: v.description } else {}),
      allowAllValue: std.get(v, 'includeAll', false),
      allowMultiple: std.get(v, 'multi', false),
      sort: 'alphabetical-asc',
      plugin: { kind: 'PrometheusLabelValuesVariable', spec: labelValues(v) },
    } + (if std.get(v, 'includeAll', false) then { defaultValue: '$__all' } + (if std.get(v, 'allValue', null) != null then { customAllValue: v.allValue } else {}) else {}),
  };

  // now-6h -> 6h; Grafana's other forms (now-1d/d, absolute times) have no Perses duration.
  local duration(g) =
    local d = std.strReplace(g.time.from, 'now-', '');
    if std.startsWith(g.time.from, 'now-') && std.length(d) >= 2 && std.member(['s', 'm', 'h', 'd', 'w'], d[std.length(d) - 1]) && std.all([std.member('0123456789', x) for x in std.stringChars(std.substr(d, 0, std.length(d) - 1))])
    then d
    else error 'perses.libsonnet: dashboard %s: time.from %s is not now-<duration>' % [g.title, g.time.from];

  local dashboard(file, g) =
    local panels = [p for p in g.panels if p.type != 'row'];
    local first = std.sort(panels, function(p) p.gridPos.y * 1000 + p.gridPos.x)[0];
    {
      kind: 'Dashboard',
      metadata: { name: g.uid, project: c.persesProject },
      spec: {
        display: { name: g.title } + (if std.get(g, 'description', '') != '' then { description: g.description } else {}),
        duration: duration(g),
        refreshInterval: if std.member(['5s', '10s', '15s', '30s', '1m', '5m', '15m', '30m', '1h'], g.refresh) then g.refresh
        else error 'perses.libsonnet: dashboard %s: refresh %s is not a Perses refresh interval' % [g.title, g.refresh],
        variables: [variable(v) for v in g.templating.list if v.type == 'query'],
        panels: { [panelKey(p)]: panel(p, distinct(panelLinks(g, p) + (if p.id == first.id then dashboardLinks(g) else []))) for p in panels },
        layouts: [{
          kind: 'Grid',
          spec: { items: [
            {
              x: p.gridPos.x,
              y: p.gridPos.y,
              width: p.gridPos.w,
              height: p.gridPos.h,
              content: { '$ref': '#/spec/panels/' + panelKey(p) },
            }
            for p in panels
          ] },
        }],
      },
    };
  { [f]: dashboard(f, grafana[f]) for f in std.objectFields(grafana) }
