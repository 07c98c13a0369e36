// Types the generated .gen/*.ts files are checked against. Every shape comes
// from Grafana's published @grafana/schema package: the classic (v1, the one
// with schemaVersion) dashboard model and each panel plugin's Options /
// FieldConfig. Only two things are ours: the Json<> adapter below and the
// Prometheus query shape, which @grafana/schema does not ship.
import type { DataQuery, DataSourceRef, Panel, RowPanel, VariableModel } from '@grafana/schema';
import type * as raw from '@grafana/schema/dist/esm/raw/dashboard/x/Dashboard_types.gen';
import type * as BarGauge from '@grafana/schema/dist/esm/raw/composable/bargauge/panelcfg/x/BarGaugePanelCfg_types.gen';
import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as StateTimeline from '@grafana/schema/dist/esm/raw/composable/statetimeline/panelcfg/x/StateTimelinePanelCfg_types.gen';
import type * as Table from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

// JSON cannot hold a TypeScript enum member, only its value, so a plain
// `const d: Dashboard = {...}` would reject "colorMode": "value". Json<T> maps
// every string enum to the union of its literal values (`${E}`) and leaves
// numeric enums alone (a numeric literal that is a member is assignable, any
// other number is not). Object shapes, optionality and required keys are kept,
// so excess-property and missing-property checks still apply.
export type Json<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer U>
      ? Array<Json<U>>
      : T extends object
        ? { [K in keyof T]: Json<T[K]> }
        : T;

// The Prometheus data source's query model (Grafana's
// public/app/plugins/datasource/prometheus/dataquery.cue), which is not part
// of @grafana/schema; DataQuery (refId, hide, datasource, ...) is.
export interface PromQuery extends DataQuery {
  expr: string;
  legendFormat?: string;
  instant?: boolean;
  range?: boolean;
  exemplar?: boolean;
  format?: 'time_series' | 'table' | 'heatmap';
  editorMode?: 'code' | 'builder';
  interval?: string;
  intervalFactor?: number;
}

// FieldConfigSource with the plugin's own `custom` shape. The veneer type
// intersects custom with Record<string, unknown>, which would let any typo in
// custom through; building from the raw type keeps custom closed.
type FieldConfigOf<Custom> = Omit<raw.FieldConfigSource, 'defaults' | 'overrides'> & {
  defaults: Omit<raw.FieldConfig, 'custom'> & { custom?: Partial<Custom> };
  overrides: Array<{ matcher: raw.MatcherConfig; properties: Array<OverrideProperty<Custom>> }>;
};

// The schema types an override property as { id: string; value?: unknown }.
// Grafana resolves the id as a path into the field config ("unit",
// "custom.cellOptions"), so check the value against the type at that path;
// an id that is no such path fails too.
type OverrideProperty<Custom> =
  | { [K in keyof raw.FieldConfig & string]: { id: K; value?: raw.FieldConfig[K] } }[keyof raw.FieldConfig & string]
  | { [K in keyof Custom & string]: { id: `custom.${K}`; value?: Custom[K] } }[keyof Custom & string];

// A panel of one plugin type. Grafana fills missing options from the plugin's
// defaultOptions, so the top level of options is Partial; whatever is present
// must have the plugin's keys and value types. fieldConfig is required because
// every panel here must state a unit.
type PanelOf<Type extends string, Options, Custom = Record<string, never>> = Json<
  Omit<Panel, 'type' | 'options' | 'fieldConfig' | 'targets' | 'datasource'>
> & {
  type: Type;
  datasource?: Json<DataSourceRef>;
  options?: Partial<Json<Options>>;
  fieldConfig: Json<FieldConfigOf<Custom>>;
  targets?: Array<Json<PromQuery>>;
};

// Panel types the dashboards may use. A panel of any other type fails the
// check (lint.mjs) until it is added here, so no panel goes unchecked.
export interface Panels {
  stat: PanelOf<'stat', Stat.Options>;
  table: PanelOf<'table', Table.Options, Table.FieldConfig>;
  timeseries: PanelOf<'timeseries', TimeSeries.Options, TimeSeries.FieldConfig>;
  'state-timeline': PanelOf<'state-timeline', StateTimeline.Options, StateTimeline.FieldConfig>;
  bargauge: PanelOf<'bargauge', BarGauge.Options>;
  row: Json<RowPanel>;
}

// The dashboard minus its panels, which are checked one by one above and then
// only referenced here.
export type DashboardJson = Json<Omit<raw.Dashboard, 'panels' | 'templating' | 'annotations'>> & {
  panels?: unknown[];
  templating?: { list?: Array<Json<VariableModel>> };
  annotations?: Json<raw.AnnotationContainer>;
};
