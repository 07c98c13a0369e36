// persesDashboards: the same dashboards for Perses, translated from grafanaDashboards after
// _config has been applied, so one source (the Grafana JSON beside this file and the
// rewrites in dashboards.libsonnet) gives both, with the same queries, legends, variables,
// layout and multi-cluster mode. Nothing here restates a query.
//
// The panels map to the Perses plugins whose schemas these machines can get (Prometheus,
// TimeSeriesChart, StatChart; hack/perses/plugins.sh says why Table, BarChart and
// StatusHistoryChart are missing):
//   timeseries      -> TimeSeriesChart
//   stat            -> StatChart (value mappings, thresholds, the calculation)
//   bargauge        -> StatChart, one value per series under its legend: the top-10 lists
//                      stay readable, which ten gauges in one panel are not
//   state-timeline  -> TimeSeriesChart of the same 0/1 series, one line per holder, named
//                      by the labels the query keeps
//   table           -> TimeSeriesChart with a table legend of each series' last value,
//                      one series per row and query, named by the row's labels and the
//                      table's column title
// docs/dashboards.md ("Perses") shows the result and lists what a table loses.
function(c, grafana)
  local fmt(unit) = {
    s: { unit: 'seconds' },
    dtdurations: { unit: 'seconds' },
    bytes: { unit: 'bytes' },
    percentunit: { unit: 'percent-decimal' },
    cps: { unit: 'counts/sec' },
    ops: { unit: 'ops/sec' },
  }[unit];
  local hasFmt(d) = std.objectHas(d, 'unit') && std.member(['s', 'dtdurations', 'bytes', 'percentunit', 'cps', 'ops'], d.unit);
  local formatOf(d) = if hasFmt(d) then fmt(d.unit) else { unit: 'decimal' };

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

  local calculation(p) =
    local calcs = std.get(std.get(std.get(p, 'options', {}), 'reduceOptions', {}), 'calcs', ['lastNotNull']);
    {
      lastNotNull: 'last-number',
      last: 'last',
      firstNotNull: 'first-number',
      first: 'first',
      mean: 'mean',
      max: 'max',
      min: 'min',
      sum: 'sum',
    }[if std.length(calcs) > 0 then calcs[0] else 'lastNotNull'];

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

  // The labels a table's rows are keyed by: the first `by (...)` of its first query, less the
  // cluster label (a table shows one cluster's rows, or says which in its own column).
  local rowLabels(expr) =
    local at = std.findSubstr('by (', expr);
    if std.length(at) == 0 then []
    else
      local rest = std.substr(expr, at[0] + 4, std.length(expr));
      local list = std.substr(rest, 0, std.findSubstr(')', rest)[0]);
      [std.stripChars(l, ' ') for l in std.split(list, ',') if std.stripChars(l, ' ') != c.clusterLabel && std.stripChars(l, ' ') != 'kind'];

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

  local query(expr, name) = {
    kind: 'TimeSeriesQuery',
    spec: { plugin: {
      kind: 'PrometheusTimeSeriesQuery',
      spec: { query: expr } + (if name != '' then { seriesNameFormat: name } else {}),
    } },
  };
  local targets(p) = [t for t in std.get(p, 'targets', []) if !std.get(t, 'hide', false)];
  local rowName(p) = std.join('/', ['{{' + l + '}}' for l in rowLabels(targets(p)[0].expr)]);
  local queries(p) =
    if p.type == 'table' then [query(t.expr, rowName(p) + ' · ' + columnTitle(p, t)) for t in targets(p)]
    else if p.type == 'state-timeline' then [query(t.expr, rowName(p)) for t in targets(p)]
    else [query(t.expr, std.get(t, 'legendFormat', '')) for t in targets(p)];

  local yAxis(p) =
    local d = defaults(p);
    { format: formatOf(d) }
    + (if std.get(d, 'min', null) != null then { min: d.min } else {})
    + (if std.get(d, 'max', null) != null then { max: d.max } else {});

  local legendOf(p) =
    local l = std.get(std.get(p, 'options', {}), 'legend', {});
    if !std.get(l, 'showLegend', true) then {}
    else { legend: { position: if std.get(l, 'placement', 'bottom') == 'right' then 'right' else 'bottom', mode: if std.get(l, 'displayMode', 'list') == 'table' then 'table' else 'list' } };

  local plugin(p) =
    local d = defaults(p);
    if p.type == 'timeseries' then {
      kind: 'TimeSeriesChart',
      spec: legendOf(p) + { yAxis: yAxis(p) } + thresholds(p),
    }
    else if p.type == 'state-timeline' then {
      kind: 'TimeSeriesChart',
      spec: { legend: { position: 'bottom', mode: 'list' }, yAxis: { format: { unit: 'decimal' }, min: 0, max: 1 }, visual: { display: 'line', lineWidth: 2 } },
    }
    else if p.type == 'table' then {
      kind: 'TimeSeriesChart',
      spec: { legend: { position: 'bottom', mode: 'table', values: ['last-number'] }, yAxis: { format: formatOf(d) } },
    }
    else if p.type == 'stat' || p.type == 'bargauge' then {
      kind: 'StatChart',
      spec: { calculation: calculation(p), format: formatOf(d) } + thresholds(p) + mappings(p),
    }
    else error 'perses.libsonnet: no Perses panel for the Grafana panel type %s (panel %s): map it here' % [p.type, p.title];

  local panelKey(p) = std.toString(p.id);
  local panel(p) = {
    kind: 'Panel',
    spec: {
      display: { name: p.title } + (if std.get(p, 'description', '') != '' then { description: p.description } else {}),
      plugin: plugin(p),
      queries: queries(p),
    },
  };

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

  local dashboard(file, g) =
    local panels = [p for p in g.panels if p.type != 'row'];
    {
      kind: 'Dashboard',
      metadata: { name: g.uid, project: c.persesProject },
      spec: {
        display: { name: g.title } + (if std.get(g, 'description', '') != '' then { description: g.description } else {}),
        duration: std.strReplace(g.time.from, 'now-', ''),
        refreshInterval: g.refresh,
        variables: [variable(v) for v in g.templating.list if v.type == 'query'],
        panels: { [panelKey(p)]: panel(p) for p in panels },
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
  { [std.strReplace(f, '.json', '')]: dashboard(f, grafana[f]) for f in std.objectFields(grafana) }
