// Self-monitoring. LeaseExporterNoFreshReplica pages once per deployment that has no
// current replica left. The others are per replica (not de-duplicated): each replica has its
// own watch and cache, and each one that is broken is worth knowing about; while they fire,
// the per-lease alerts are silent for that replica, so they say "LeaseNoLeader is blind".
function(c, lib)
  local p = lib.p { stale: c.alerts.LeaseExporterWatchStale.staleSeconds, L: c.clusterLabel };
  local nf = c.alerts.LeaseExporterNoFreshReplica;
  local q = p {
    window: nf.seenWindow,
    byJob: lib.by(['namespace', 'job']),
    onJob: lib.on(['namespace', 'job']),
    byCluster: lib.by([]),
  };
  [
    // The page for a blind deployment, whatever blinds it: no replica of a job (in its
    // namespace where targets carry one: a Deployment) is scraped with the fresh-replica
    // guard of the per-lease alerts, so LeaseNoLeader cannot fire. Its replicas may be stale
    // or unsynced (then also not Ready, and the chart's PodDisruptionBudget lets a drain
    // evict them: unhealthyPodEvictionPolicy AlwaysAllow), down, evicted or deleted. A target
    // that vanishes leaves no up series, so the jobs are those seen within seenWindow; past
    // it, or never seen, the no-target branch answers (per cluster in multi-cluster mode, as
    // LeaseExporterDown). 1m: a rollout keeps a Ready replica throughout (maxUnavailable 0)
    // and a single replica's successor is scraped within a scrape interval of being Ready,
    // yet with 30s scrapes and evaluations it pages within 2m of the last fresh scrape. The
    // per-replica alerts below say which replica is broken and why.
    lib.alert('LeaseExporterNoFreshReplica', 'critical', if c.showMultiCluster then |||
      (
          group %(byJob)s (max_over_time(up{%(sel)s}[%(window)s]))
        unless %(onJob)s
          %(fresh)s
      )
      or
      (
          group %(byCluster)s (up)
        unless %(onCluster)s
          group %(byCluster)s (max_over_time(up{%(sel)s}[%(window)s]))
      )
    ||| % (q { onCluster: lib.on([]) }) else |||
      (
          group %(byJob)s (max_over_time(up{%(sel)s}[%(window)s]))
        unless %(onJob)s
          %(fresh)s
      )
      or
      absent_over_time(up{%(sel)s}[%(window)s])
    ||| % q,
              '{{ with $labels.job }}No replica of lease-exporter job {{ . }}{{ with $labels.namespace }} in {{ . }}{{ end }} has a current view of the Leases{{ else }}No lease-exporter has been scraped for ' + lib.words(nf.seenWindow) + '{{ end }}; LeaseNoLeader is blind.',
              '{{ with $labels.job }}No replica of job {{ . }}{{ with $labels.namespace }} in namespace {{ . }}{{ end }} is scraped with an open watch and a synced cache: each is stale, not synced, down, or gone (evicted, deleted, not discovered).{{ else }}Prometheus has had no target matching the lease-exporter job selector for ' + lib.words(nf.seenWindow) + '.{{ end }} No Lease alert can fire from it, LeaseNoLeader included, until a replica is current again.'),

    // Stale for 60s, then held for 1m: fires after ~2m without a watch, as soon as a real
    // outage would have paged through LeaseNoLeader's 2m grace.
    lib.alert('LeaseExporterWatchStale', 'warning', |||
      lease_exporter_watch_stale_seconds{%(sel)s} > %(stale)s
    ||| % p,
              'lease-exporter {{ $labels.instance }} has a stale view of the Leases.',
              'lease-exporter {{ $labels.instance }} (job {{ $labels.job }}) has had no open watch on the API server for {{ $value | humanizeDuration }}. Its Lease data is frozen and the per-lease alerts ignore it; if every replica is stale, LeaseNoLeader is blind.'),

    // The initial LIST takes seconds even for tens of thousands of node Leases; 5m without
    // it means it is failing (RBAC, API server), not slow.
    lib.alert('LeaseExporterNotSynced', 'warning', |||
      lease_exporter_cache_synced{%(sel)s} == 0
    ||| % p,
              'lease-exporter {{ $labels.instance }} has not synced its Lease cache.',
              'lease-exporter {{ $labels.instance }} (job {{ $labels.job }}) has still not completed its initial list of Leases, so it exports no per-lease series and the per-lease alerts cannot fire from it.'),

    // up == 0 per replica, and a rule for no target discovered at all (a deleted Deployment
    // or a wrong job selector leaves no up series to be 0). 5m rides out a pod restart or
    // reschedule. absent() answers for the whole Prometheus, without labels: under a global
    // ruler it would fire only when no cluster has an exporter left. So multi-cluster mode
    // asks per cluster instead: a cluster whose Prometheus scrapes something (any up
    // series) but no lease-exporter. Evaluated in a per-cluster Prometheus, that is
    // absent() for any Prometheus that scrapes at least itself.
    lib.alert('LeaseExporterDown', 'warning', if c.showMultiCluster then |||
      up{%(sel)s} == 0
      or
      (
        group by (%(L)s) (up)
        unless on (%(L)s)
        group by (%(L)s) (up{%(sel)s})
      )
    ||| % p else |||
      up{%(sel)s} == 0
      or
      absent(up{%(sel)s})
    ||| % p,
              'lease-exporter {{ with $labels.instance }}{{ . }} is down{{ else }}is not scraped at all{{ end }}.',
              '{{ with $labels.instance }}Prometheus cannot scrape lease-exporter {{ . }} (job {{ $labels.job }}).{{ else }}Prometheus has no lease-exporter target (no up series matching the job selector).{{ end }} Lease alerts from it cannot fire; if no replica is up, LeaseNoLeader is blind.'),
  ]
