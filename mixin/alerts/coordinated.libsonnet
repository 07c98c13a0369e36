// The coordinated leader election alerts (docs/metrics.md#coordinated-leader-election).
function(c, lib)
  local p = lib.p;
  local preferred = lib.lookup('lease_info', ['job', 'namespace', 'lease'], ',preferred_holder!=""');
  local candidates = lib.lookup('lease_candidates', ['job', 'namespace', 'lease'], '');
  [
    // The API server names spec.preferredHolder (during an upgrade, the candidate with the
    // oldest emulation version) and client-go's holder releases at its next renewal, so a
    // handover takes one retry period plus at most one lease duration (15s for the
    // control-plane components): seconds. 5m (20 x 15s) is a stuck handover, not a slow
    // one. Only while someone else holds the Lease: no holder at all is LeaseNoLeader's
    // (critical) business. max: a fresh replica seeing the preferred holder lead is enough.
    lib.alert('LeasePreferredHolderNotLeading', 'warning', |||
      (
        max %(without)s (
            lease_holder_is_preferred{%(sel)s}
          and %(onInstanceLease)s
            (lease_held{%(sel)s} == 1)
          and %(onInstance)s
            %(fresh)s
        ) == 0
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeasePreferredHolderNotLeading"}
    ||| % p,
              'Lease {{ $labels.namespace }}/{{ $labels.lease }} is not held by its preferred holder.',
              'The API server has preferred {{ with printf `max by (preferred_holder) (' + preferred.selector + ')` '
              + preferred.args + ' | query }}{{ . | first | label "preferred_holder" }}{{ else }}another candidate{{ end }} as holder of Lease {{ $labels.namespace }}/{{ $labels.lease }} for more than '
              + lib.words(c.alerts.LeasePreferredHolderNotLeading['for'])
              + ', but the current holder has not handed over: during an upgrade, a component of a newer version keeps leading.'),

    // A coordinated Lease (spec.strategy set, or with LeaseCandidates) none of whose
    // candidates renewed within 10 minutes by the exporter's clock: the API server has
    // nobody to elect when the holder goes. Candidates renew every 5m (client-go), so the
    // exporter's 10m freshness already forgives one late renewal; 5m more rides out a
    // rolling restart of the component. max: any fresh replica seeing a fresh candidate.
    lib.alert('LeaseCoordinatedNoFreshCandidate', 'warning', |||
      (
        max %(without)s (
            lease_candidates_fresh{%(sel)s}
          and %(onInstance)s
            %(fresh)s
        ) == 0
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseCoordinatedNoFreshCandidate"}
    ||| % p,
              'Coordinated Lease {{ $labels.namespace }}/{{ $labels.lease }} has no fresh candidate.',
              'None of the LeaseCandidates of Lease {{ $labels.namespace }}/{{ $labels.lease }} renewed in the last 10 minutes (it has {{ with printf `max('
              + candidates.selector + ')` ' + candidates.args
              + ' | query }}{{ . | first | value }}{{ else }}no{{ end }} candidates), so coordinated leader election has nobody to elect if the holder goes.'),

    // A LeaseCandidate that the exporter has not seen renew for 10 minutes (two client-go
    // renewal intervals) while its Lease names it as holder or preferred holder: the API
    // server keeps electing, or the Lease keeps naming, a component that no longer answers.
    // Age at the scrape (as LeaseRenewalLagging), min: every fresh replica must agree. 5m
    // more: a renewal delayed by a restart of the component or the exporter does not page.
    // Both sides of the join read fresh replicas only: a replica whose watch is down keeps
    // the Lease as it last saw it, and its frozen lease_info would name a candidate the Lease
    // has long stopped naming.
    lib.alert('LeaseCandidateNotRenewing', 'warning', |||
      (
          (
            min %(without)s (
                (
                    timestamp(lease_candidate_observed_renew_timestamp_seconds{%(sel)s})
                  - lease_candidate_observed_renew_timestamp_seconds{%(sel)s}
                )
          and %(onInstance)s
            %(fresh)s
            ) > %(stale)s
          )
        and %(onCandidate)s
          (
              label_replace(
                max %(without)s (
                    lease_info{%(sel)s, preferred_holder!=""}
                  and %(onInstance)s
                    %(fresh)s
                ),
                "candidate", "$1", "preferred_holder", "(.+)"
              )
            or
              label_replace(
                max %(without)s (
                    lease_info{%(sel)s, holder!=""}
                  and %(onInstance)s
                    %(fresh)s
                ),
                "candidate", "$1", "holder", "(.+)"
              )
          )
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseCandidateNotRenewing"}
    ||| % (p { stale: c.alerts.LeaseCandidateNotRenewing.staleSeconds }),
              'LeaseCandidate {{ $labels.namespace }}/{{ $labels.candidate }} stopped renewing but Lease {{ $labels.lease }} names it.',
              "LeaseCandidate {{ $labels.namespace }}/{{ $labels.candidate }} was last seen renewing {{ $value | humanizeDuration }} ago, yet Lease {{ $labels.namespace }}/{{ $labels.lease }} still names it as holder or preferred holder: the component does not answer the API server's pings, so coordinated leader election cannot rely on it."),
  ]
