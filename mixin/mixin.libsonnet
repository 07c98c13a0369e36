// lease-exporter's monitoring mixin: alerts and dashboards for Kubernetes leader-election
// locks, in the shape kube-prometheus and the monitoring-mixins tools expect.
// Rendered with the defaults it is the repository's alerts/lease-exporter.rules.yml and
// dashboards/*.json (`make generate`); docs/mixin.md says how to vendor and configure it.
(import 'config.libsonnet') + {
  prometheusAlerts+:: (import 'alerts/alerts.libsonnet')($._config),
  // No recording rules: every alert is a per-sample function of stored series (docs/alerts.md).
  prometheusRules+:: { groups+: [] },
  grafanaDashboards+:: (import 'dashboards/dashboards.libsonnet')($._config),
}
