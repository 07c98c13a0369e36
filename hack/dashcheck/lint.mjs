// Project conventions the Grafana types cannot express: every panel explains
// itself and has a unit, every query is non-empty and windowed by Grafana's
// interval variables, uids are pinned, and the shared variables and links exist.
import { panelLabel, walkPanels } from './lib.mjs';

// Pinned uids: links, bookmarks and the deploy ConfigMaps refer to these, so a
// changed uid silently breaks them. A new dashboard must be added here.
export const STABLE_UIDS = {
  'leases-overview.json': 'lease-exporter-overview',
  'lease-detail.json': 'lease-exporter-lease-detail',
  'node-heartbeats.json': 'lease-exporter-node-heartbeats',
  'exporter-health.json': 'lease-exporter-health',
  // Rendered only in the mixin's multi-cluster mode (docs/mixin.md).
  'fleet-overview.json': 'lease-exporter-fleet',
};

export const TAG = 'lease-exporter';
const DATASOURCE_UID = '${datasource}';

// Grafana unit ids these dashboards may use (grafana-data valueFormats); a
// typo such as "second" would render as a bare number. Custom units
// (`suffix:`, `si:`, ...) are accepted as Grafana documents them.
const UNITS = new Set([
  'none', 'short', 'percent', 'percentunit', 'bool', 'bool_yes_no', 'string', 'locale',
  'ns', 'µs', 'ms', 's', 'm', 'h', 'd', 'dtdurations', 'dtdurationms', 'dthms',
  'dateTimeAsIso', 'dateTimeAsSystem', 'dateTimeFromNow',
  'bytes', 'decbytes', 'bits', 'Bps', 'binBps',
  'cps', 'ops', 'reqps', 'rps', 'wps', 'iops', 'cpm', 'opm', 'hertz',
]);
const CUSTOM_UNIT = /^(suffix|prefix|time|si|count|currency):/;

// Ranges inside [...] must follow the dashboard: $__rate_interval for rates,
// $__range for "over the selected range" totals. A fixed [5m] is wrong as soon
// as the scrape interval or the zoom level changes.
const WINDOWS = new Set(['$__rate_interval', '$__range', '${__rate_interval}', '${__range}']);

export function lint(dashboards, { schemaVersion }) {
  const errors = [];
  const seenUids = new Map();
  for (const { name, file, json: d } of dashboards) {
    const err = (msg) => errors.push(`${file}: ${msg}`);
    if (!(name in STABLE_UIDS)) err(`no pinned uid: add ${JSON.stringify(name)} to STABLE_UIDS in hack/dashcheck/lint.mjs`);
    else if (d.uid !== STABLE_UIDS[name]) err(`uid is ${JSON.stringify(d.uid)}, must stay ${JSON.stringify(STABLE_UIDS[name])}`);
    if (seenUids.has(d.uid)) err(`uid ${JSON.stringify(d.uid)} is also used by ${seenUids.get(d.uid)}`);
    seenUids.set(d.uid, file);
    if (d.schemaVersion !== schemaVersion) {
      err(`schemaVersion is ${d.schemaVersion}; the pinned @grafana/schema writes ${schemaVersion} (bump both together)`);
    }
    if (!d.title || !d.description) err('dashboard needs a title and a description');
    if (!(d.tags ?? []).includes(TAG)) err(`tags must include ${JSON.stringify(TAG)} (dashboard links find each other by it)`);
    const tagLink = (d.links ?? []).some((l) => l.type === 'dashboards' && (l.tags ?? []).includes(TAG));
    if (!tagLink) err(`links must include a "dashboards" link with tags [${JSON.stringify(TAG)}]`);
    lintVariables(d, err);

    const ids = new Set();
    for (const { panel } of walkPanels(d)) {
      const where = panelLabel(file, panel);
      const perr = (msg) => errors.push(`${where}: ${msg}`);
      if (typeof panel.id !== 'number' || ids.has(panel.id)) perr('needs a unique numeric id');
      ids.add(panel.id);
      if (panel.type === 'row') continue;
      if (!panel.title) perr('needs a title');
      if (!String(panel.description ?? '').trim()) perr('needs a description (what it shows and when to worry)');
      const unit = panel.fieldConfig?.defaults?.unit;
      if (!unit) perr('needs fieldConfig.defaults.unit');
      else if (!UNITS.has(unit) && !CUSTOM_UNIT.test(unit)) perr(`unknown unit ${JSON.stringify(unit)} (add it to UNITS in lint.mjs if Grafana knows it)`);
      if (panel.datasource?.uid !== DATASOURCE_UID) perr(`datasource must be {"type":"prometheus","uid":"${DATASOURCE_UID}"}`);
      if (!panel.gridPos) perr('needs a gridPos');
      lintTargets(panel, perr);
    }
  }
  return errors;
}

function lintTargets(panel, perr) {
  const targets = panel.targets ?? [];
  if (targets.length === 0) perr('has no targets');
  const refIds = new Set();
  for (const t of targets) {
    const ref = t.refId ?? '?';
    if (!t.refId || refIds.has(t.refId)) perr(`target ${ref}: needs a unique refId`);
    refIds.add(t.refId);
    if (typeof t.expr !== 'string' || t.expr.trim() === '') {
      perr(`target ${ref}: expr is empty`);
      continue;
    }
    if (t.datasource?.uid !== DATASOURCE_UID) perr(`target ${ref}: datasource uid must be ${DATASOURCE_UID}`);
    // Drop string literals first: a regex matcher may legitimately contain [...].
    const bare = t.expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
    for (const [, window] of bare.matchAll(/\[([^\]]*)\]/g)) {
      if (!WINDOWS.has(window.trim())) {
        perr(`target ${ref}: range [${window}] must be $__rate_interval (or $__range for whole-range totals)`);
      }
    }
  }
}

function lintVariables(d, err) {
  const vars = new Map((d.templating?.list ?? []).map((v) => [v.name, v]));
  const ds = vars.get('datasource');
  if (ds?.type !== 'datasource' || ds.query !== 'prometheus') err('needs variable "datasource" (type datasource, query prometheus)');
  const job = vars.get('job');
  if (job?.type !== 'query' || job.query !== 'label_values(lease_exporter_build_info, job)') {
    err('needs variable "job" = label_values(lease_exporter_build_info, job)');
  }
  // With includeAll + allValue ".*", cluster=~"$cluster" also matches series
  // that have no cluster label at all, so single-cluster setups keep working.
  // The mixin's multi-cluster mode instead shows one cluster at a time: a
  // visible single-value choice without All, over its configured label.
  const cluster = vars.get('cluster');
  const allOf = cluster?.includeAll === true && cluster.allValue === '.*';
  const oneOf = cluster?.includeAll === false && cluster.multi === false && cluster.hide === 0;
  if (cluster?.type !== 'query' || !/^label_values\(lease_exporter_build_info, \w+\)$/.test(cluster.query) || !(allOf || oneOf)) {
    err('needs variable "cluster" = label_values(lease_exporter_build_info, <cluster label>) with includeAll and allValue ".*", or (multi-cluster mode) visible, single-value, without All');
  }
  for (const v of vars.values()) {
    if (v.type === 'query' && v.datasource?.uid !== DATASOURCE_UID) err(`variable ${v.name}: datasource uid must be ${DATASOURCE_UID}`);
    if (!v.description) err(`variable ${v.name}: needs a description`);
  }
}
