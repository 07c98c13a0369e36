// lease-exporter's monitoring mixin: alerts and dashboards for Kubernetes leader-election
// locks, in the shape kube-prometheus and the monitoring-mixins tools expect.
// Rendered with the defaults it is the repository's alerts/lease-exporter.rules.yml and
// dashboards/*.json (`make generate`); docs/mixin.md says how to vendor and configure it.
(import 'config.libsonnet') + {
  prometheusAlerts+:: (import 'alerts/alerts.libsonnet')($._config),
  // No separate recording rules: the alerts are per-sample functions of stored series, and the
  // two recordings the participant join needs run inside the per-lease group, before the
  // alerts that read them (alerts/participants.libsonnet; docs/alerts.md).
  prometheusRules+:: { groups+: [] },
  grafanaDashboards+:: (import 'dashboards/dashboards.libsonnet')($._config),
  // The same dashboards for Perses, translated from grafanaDashboards (docs/dashboards.md).
  persesDashboards+:: (import 'dashboards/perses.libsonnet')($._config, $.grafanaDashboards),
}
