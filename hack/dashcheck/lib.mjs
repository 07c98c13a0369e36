// Shared helpers: where the dashboards live, how to load them and how to walk
// their panels, so lint.mjs and typecheck.mjs name a failing panel the same way.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..', '..');
export const DASHBOARD_DIR = join(ROOT, 'dashboards');

// Loads every *.json under dir, sorted so output is stable. A file that is not
// valid JSON is reported as an error instead of aborting the whole run, so one
// broken file does not hide problems in the others.
export function loadDashboards(dir = DASHBOARD_DIR) {
  const out = [];
  const errors = [];
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  for (const name of files) {
    const path = join(dir, name);
    // Repo-relative inside the repo; absolute for a directory elsewhere.
    const rel = relative(ROOT, path);
    const file = rel.startsWith('..') ? path : rel;
    try {
      out.push({ name, file, json: JSON.parse(readFileSync(path, 'utf8')) });
    } catch (err) {
      errors.push(`${file}: not valid JSON: ${err.message}`);
    }
  }
  if (files.length === 0) errors.push(`${relative(ROOT, dir) || dir}: no dashboard *.json files found`);
  return { dashboards: out, errors };
}

// Yields every panel, including those nested in collapsed rows, with the row
// it sits in (Grafana stores a collapsed row's panels inside the row).
export function* walkPanels(dashboard) {
  for (const panel of dashboard.panels ?? []) {
    yield { panel, row: null };
    if (panel.type === 'row') {
      for (const inner of panel.panels ?? []) yield { panel: inner, row: panel };
    }
  }
}

// `dashboards/x.json panel 4 "Title"`: the wording every message uses.
export function panelLabel(file, panel) {
  return `${file} panel ${panel.id ?? '?'} ${JSON.stringify(panel.title ?? '(untitled)')}`;
}

export function clone(value) {
  return JSON.parse(JSON.stringify(value));
}
