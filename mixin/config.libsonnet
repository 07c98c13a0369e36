// The mixin's knobs. Override any of them as monitoring mixins do:
//   (import 'lease-exporter-mixin/mixin.libsonnet') + { _config+:: { clusterLabel: 'k8s_cluster' } }
// With these defaults the mixin renders exactly the alerts/ and dashboards/ files the
// repository ships (mixin/render's drift test holds it to that). docs/mixin.md explains each key.
{
  _config+:: {
    // PromQL label matcher that selects the exporter's scrape job in every alert expression.
    exporterSelector: 'job=~".*lease-exporter.*"',
    // Narrows the dashboards' job variable (label_values(lease_exporter_build_info{...}, job)).
    // Empty lists every job exporting lease_exporter_build_info, a metric only this exporter has.
    dashboardSelector: '',
    // Labels that tell HA replicas of the exporter apart; per-lease alerts aggregate them away.
    replicaLabels: ['instance', 'pod'],

    // The label a global query layer (Thanos, Mimir, federation) puts on each cluster's series.
    clusterLabel: 'cluster',
    // true: dashboards pick one cluster (a visible single-value variable) and every
    // aggregation and vector matching in alerts keeps clusterLabel; adds the fleet overview.
    showMultiCluster: false,

    // The participants' own leader_election_master_status{name} (client-go, controller-runtime,
    // kube-scheduler, kube-controller-manager), joined with the exporter's view of the lock
    // (docs/alerts.md#self-report-against-the-lease). participantSelector narrows the series
    // ('' takes all). The lock is <namespace>/<name>, the participant its <pod>; each label
    // below, if not the default, overrides namespace, name or pod only on the series that
    // carry it, so it can be set on just the targets that need it.
    participantSelector: '',
    participantLockLabel: 'name',
    participantNamespaceLabel: 'namespace',
    participantPodLabel: 'pod',

    // The exporter's status pages as people reach them (its Service through an ingress, a
    // port-forward...), e.g. 'https://leases.example.com'. Set, every per-lease alert gets a
    // status_page annotation linking to its lock's page, and the lease-detail dashboard a link
    // to the page of the lock it shows. It is a Prometheus template in the alerts: in
    // multi-cluster mode '{{ $labels.cluster }}' (your clusterLabel) picks each cluster's
    // exporter, and becomes ${cluster} in the dashboard. '' leaves both out.
    statusPageURL: '',

    // printf pattern; %s is the alert name.
    runbookURLPattern: 'https://github.com/lease-exporter/lease-exporter/blob/main/docs/runbooks/%s.md',

    // Leases never to alert on: { namespace, lease, alert (optional: one alert only),
    // cluster (optional, multi-cluster mode: that cluster only) }.
    exemptions: [],

    // Each alert's `for` ('' or '0' for none) and thresholds. The judgement thresholds
    // (skew tolerance, candidate staleness) default to the exporter's own, lock/judgement.go.
    alerts: {
      LeaseNoLeader: { 'for': '2m' },
      LeaseMissing: { 'for': '5m' },
      LeaseRenewalLagging: { 'for': '1m', durationFraction: 0.5 },
      LeaseFrequentTransitions: { 'for': '', window: '10m', minChanges: 6 },
      LeaseRenewStorm: { 'for': '10m', window: '5m', maxRenewalsPerSecond: 1 },
      LeaseHolderClockSkew: { 'for': '5m', durationFraction: 0.25, minSeconds: 2, maxSeconds: 30 },
      LeasePreferredHolderNotLeading: { 'for': '5m' },
      LeaseCoordinatedNoFreshCandidate: { 'for': '5m' },
      LeaseCandidateNotRenewing: { 'for': '5m', staleSeconds: 600 },
      LeaseSplitBrain: { 'for': '1m' },
      LeaseLeaderDisagreement: { 'for': '1m' },
      // unansweredScrapeSeconds: a failed scrape that took this long timed out (a dead
      // process refuses at once); keep it below the participants' scrape timeout (10s by
      // default). lookback: how long after its last sample a hung leader is still known.
      LeaseLeaderHung: { 'for': '30s', unansweredScrapeSeconds: 5, lookback: '10m' },
      LeaseExporterWatchStale: { 'for': '1m', staleSeconds: 60 },
      LeaseExporterNotSynced: { 'for': '5m' },
      LeaseExporterDown: { 'for': '5m' },
      LeaseExporterNoFreshReplica: { 'for': '1m', seenWindow: '1h' },
    },

    // Dashboards: auto-refresh, and the default time range (start) per dashboard file.
    dashboardRefresh: '30s',
    dashboardTimeFrom: {
      'leases-overview.json': 'now-6h',
      'lease-detail.json': 'now-6h',
      'node-heartbeats.json': 'now-3h',
      'exporter-health.json': 'now-6h',
      'fleet-overview.json': 'now-6h',
    },
    // The Perses project the Perses dashboards belong to (metadata.project of each Dashboard;
    // the PersesDashboard resources take their namespace instead, which the operator uses as
    // the project).
    persesProject: 'lease-exporter',
  },
}
