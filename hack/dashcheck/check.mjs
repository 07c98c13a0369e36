// Entry point (run through check.sh): loads dashboards/*.json, checks them
// against Grafana's types and the project conventions, and proves on every
// run that both checks still bite by feeding them deliberately broken copies.
// Usage: node check.mjs [dashboards-dir]
import { resolve } from 'node:path';
import { defaultDashboard } from '@grafana/schema';
import { clone, DASHBOARD_DIR, loadDashboards, walkPanels } from './lib.mjs';
import { lint } from './lint.mjs';
import { typecheck } from './typecheck.mjs';

// The schemaVersion the pinned @grafana/schema writes for a new dashboard:
// "current" is whatever that package says, so a package bump flags every
// dashboard that needs migrating.
const schemaVersion = defaultDashboard.schemaVersion;

const firstPanel = (d, pred) => [...walkPanels(d)].map((p) => p.panel).find(pred);
const withTargets = (p) => (p.targets ?? []).length > 0;
const firstOverride = (d, id) =>
  [...walkPanels(d)]
    .flatMap(({ panel }) => panel.fieldConfig?.overrides ?? [])
    .flatMap((o) => o.properties)
    .find((prop) => prop.id === id);

// Each mutant breaks one thing a real mistake would; the check must reject it.
const SCHEMA_MUTANTS = {
  'schemaVersion as a string': (d) => (d.schemaVersion = String(d.schemaVersion)),
  'stat colorMode not in the enum': (d) => (firstPanel(d, (p) => p.type === 'stat').options.colorMode = 'rainbow'),
  'misspelt panel key': (d) => {
    const p = firstPanel(d, (x) => x.description);
    p.descripton = p.description;
    delete p.description;
  },
  'threshold step without a color': (d) => delete firstPanel(d, (p) => p.fieldConfig?.defaults?.thresholds).fieldConfig.defaults.thresholds.steps[0].color,
  'variable hide out of range': (d) => (d.templating.list[0].hide = 7),
  'misspelt timeseries custom key': (d) => (firstPanel(d, (p) => p.type === 'timeseries').fieldConfig.defaults.custom.lineWidht = 1),
  'dashboard link type not in the enum': (d) => (d.links[0].type = 'dashboard'),
  'override value of the wrong type': (d) => (firstOverride(d, 'custom.cellOptions').value = { type: 'color-backgrond' }),
  'override id that is no field config path': (d) => (firstOverride(d, 'custom.cellOptions').id = 'custom.cellOption'),
};
const LINT_MUTANTS = {
  'panel without description': (d) => delete firstPanel(d, withTargets).description,
  'panel without unit': (d) => delete firstPanel(d, withTargets).fieldConfig.defaults.unit,
  'empty expr': (d) => (firstPanel(d, withTargets).targets[0].expr = ' '),
  'fixed rate window': (d) => (firstPanel(d, withTargets).targets[0].expr = 'rate(lease_observed_holder_changes_total[5m])'),
  'changed uid': (d) => (d.uid = 'renamed'),
};
const MUTANT_BASE = 'leases-overview.json';

function main() {
  const dir = resolve(process.argv[2] ?? DASHBOARD_DIR);
  const { dashboards, errors } = loadDashboards(dir);
  errors.push(...lint(dashboards, { schemaVersion }));

  const inputs = dashboards.map((d) => ({ key: d.file, file: d.file, json: d.json }));
  const base = dashboards.find((d) => d.name === MUTANT_BASE);
  const mutantErrors = [];
  if (!base) mutantErrors.push(`self-test: ${MUTANT_BASE} not found, cannot prove the checks reject broken dashboards`);
  const mutate = (fn) => {
    const json = clone(base.json);
    fn(json);
    return json;
  };
  if (base) {
    for (const [name, fn] of Object.entries(SCHEMA_MUTANTS)) {
      inputs.push({ key: `mutant:${name}`, file: `${base.file} [mutant: ${name}]`, json: mutate(fn) });
    }
  }

  const results = typecheck(inputs);
  for (const d of dashboards) errors.push(...results.get(d.file));
  let rejected = 0;
  let total = 0;
  if (base) {
    for (const name of Object.keys(SCHEMA_MUTANTS)) {
      total++;
      if (results.get(`mutant:${name}`).length > 0) rejected++;
      else mutantErrors.push(`self-test: the schema check accepted a broken dashboard (${name})`);
    }
    for (const [name, fn] of Object.entries(LINT_MUTANTS)) {
      total++;
      const clean = lint([{ ...base }], { schemaVersion }).length;
      const broken = lint([{ ...base, json: mutate(fn) }], { schemaVersion }).length;
      if (broken > clean) rejected++;
      else mutantErrors.push(`self-test: the convention check accepted a broken dashboard (${name})`);
    }
  }

  const panels = dashboards.reduce((n, d) => n + [...walkPanels(d.json)].length, 0);
  const all = [...errors, ...mutantErrors];
  if (all.length > 0) {
    for (const e of all) console.error(`FAIL ${e}`);
    console.error(`dashcheck: ${all.length} problem(s) in ${dashboards.length} dashboard(s)`);
    process.exit(1);
  }
  console.log(
    `dashcheck: ${dashboards.length} dashboards, ${panels} panels OK against @grafana/schema ` +
      `(schemaVersion ${schemaVersion}) and conventions; self-test rejected ${rejected}/${total} broken copies`,
  );
}

main();
