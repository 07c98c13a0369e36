// Self-report against the Lease: the participants' own leader_election_master_status{name}
// (client-go's leaderelection metrics hook, as kube-scheduler, kube-controller-manager and
// controller-runtime register it) joined with the exporter's view of the lock.
// docs/alerts.md#self-report-against-the-lease states the join's assumptions.
//
// They live at the end of the per-lease group, not in a group of their own: rules of one group
// run in order at one timestamp, so the alerts read this evaluation's recordings (a second
// group would lag them by up to an interval), and the exemptions prepended to the group
// exist before them, as for every per-lease alert.
//
// The join, written once in two recording rules that the alerts read:
// - the Lease's holder as a pod: holderIdentity minus a trailing _<uuid> (client-go,
//   kube-scheduler, controller-runtime name holders <hostname>_<uuid>; an identity without it
//   compares whole), from fresh exporter replicas only (watch up, cache synced, as
//   LeaseNoLeader), so a watch outage drops the lock from the join instead of paging;
// - the participants that report leading (== 1), relabelled to the lock's namespace/lease
//   and the participant's pod, kept only for locks that recording sees: a lock outside the
//   exporter's namespaces, or any lock while no replica is fresh, never pages.
// The holder label is kept on the first recording for the descriptions; it churns with the
// holder exactly as lease_info does, one series per leader-election lock.
function(c, lib)
  local a = c.alerts, p = lib.p;
  local holders = 'namespace_lease_pod:lease_info:relabel';
  local leading = 'namespace_lease_pod:leader_election_master_status:max';
  local uuid = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
  // label_replace(inner, "to", "$1", "from", "(.+)"): the override applies only to series
  // that carry a non-empty `from`; the others keep `to` as scraped.
  local override(inner, to, from) =
    if from == to then inner
    else 'label_replace(%s, "%s", "$1", "%s", "(.+)")' % [inner, to, from];
  local status = 'leader_election_master_status'
                 + (if c.participantSelector == '' then '' else '{' + c.participantSelector + '}');
  // The lock's name comes from `name`, client-go's label, unless participantLockLabel is set
  // on the series (kube-scheduler, for one, always says name="kube-scheduler"); namespace and
  // pod likewise.
  local relabel(inner) =
    local named = override(inner, 'lease', 'name');
    override(override(if c.participantLockLabel == 'name' then named else override(named, 'lease', c.participantLockLabel),
                      'namespace', c.participantNamespaceLabel), 'pod', c.participantPodLabel);
  local relabelled = relabel('(%s == 1)' % status);
  // When the holder acquired the lock, by the exporter's clock: acquireTime minus the holder's
  // skew (or acquireTime itself before the exporter has measured it), the latest among the
  // replicas. A participant's 1 counts only if it was scraped after that. A Pod removed from
  // discovery (deleted, scaled away) before a scrape fails keeps its last sample current for
  // over two scrape intervals (Prometheus writes the stale markers that late in case the
  // target comes back), and that ghost of a leader that has handed over would otherwise sit
  // beside its successor: at 60s scrapes past LeaseSplitBrain's 1m, and at any interval when
  // leaders are replaced more often than that (hack/detect's flapping row paged so at 15s).
  // Every real second leader is scraped after the holder acquired.
  local acquired = |||
    max %(byLease)s (
        (
            lease_acquire_timestamp_seconds{%(sel)s, class="leader-election"}
          - lease_holder_clock_skew_seconds{%(sel)s, class="leader-election"}
        )
      or
        lease_acquire_timestamp_seconds{%(sel)s, class="leader-election"}
    )
  ||| % (p { byLease: lib.by(['namespace', 'lease']) });
  local scraped = relabel('timestamp(%s)' % status);
  // A participant that led when it stopped answering: its last sample said 1 (range vectors
  // leave out the stale markers a failed scrape writes), it has no fresh sample now, and its
  // target's last scrape failed slowly. A dead process refuses the connection at once; a
  // frozen one (SIGSTOP, a suspended VM, a stop-the-world pause) or one on an unreachable node
  // accepts it or drops it and never answers, so the scrape runs into its timeout.
  local hung = relabel(|||
    (last_over_time(%(status)s[%(lookback)s]) == 1)
      and %(onInstance)s
        (scrape_duration_seconds >= %(slow)s)
      unless %(onInstance)s
        %(status)s
  ||| % (p { status: status, lookback: a.LeaseLeaderHung.lookback, slow: a.LeaseLeaderHung.unansweredScrapeSeconds }));
  local lock = lib.lookup(holders, ['namespace', 'lease'], '');
  local leaders = lib.lookup(leading, ['namespace', 'lease'], '');
  [
    {
      record: holders,
      expr: |||
        label_replace(
          max %(without)s (
              lease_info{%(sel)s, class="leader-election"}
            and %(onInstance)s
              %(fresh)s
          ),
          "pod", "$1", "holder", "(.*?)(?:_%(uuid)s)?"
        )
      ||| % (p { uuid: uuid }),
    },
    {
      record: leading,
      expr: |||
        max %(by)s (
            %(relabelled)s
          unless
            %(scraped)s
              <= %(onLease)s group_left ()
            %(acquired)s
        )
        and %(onLease)s
          %(holders)s
      ||| % (p { by: lib.by(['namespace', 'lease', 'pod']), relabelled: relabelled, holders: holders,
                 scraped: scraped, acquired: std.strReplace(std.rstripChars(acquired, '\n'), '\n', '\n    ') }),
    },

    // Two participants of one lock both act as leader. A handover shows it for one stale
    // sample: the old leader reports 0 (released, or lost), stops being scraped (crashed,
    // paused) or leaves discovery (its last report predates the acquisition, see `acquired`)
    // before its successor acquires. A leader paused past its lease and resumed
    // reports 1 for its renew deadline (test/e2e: 10.0s with the components' default 10s),
    // plus one scrape interval in Prometheus: 40s at 30s scrapes, below 1m, so
    // that real but short double leadership is measured (docs/alerts.md), not paged. What
    // lasts is two electors that do not share a lock, e.g. one controller elected in two
    // namespaces, or one that keeps reporting 1 after losing.
    lib.alert('LeaseSplitBrain', 'critical', |||
      (
        count %(by)s (
          %(leading)s
        ) > 1
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseSplitBrain"}
    ||| % (p { by: lib.by(['namespace', 'lease']), leading: leading }),
              'More than one participant of {{ $labels.namespace }}/{{ $labels.lease }} reports leading.',
              '{{ $value }} participants report leader_election_master_status 1 for lock {{ $labels.namespace }}/{{ $labels.lease }} (pods {{ range $i, $s := printf `'
              + leaders.selector + '` ' + leaders.args
              + ' | query | sortByLabel "pod" }}{{ if $i }}, {{ end }}{{ $s.Labels.pod }}{{ end }}); the Lease names {{ with printf `' + lock.selector + '` ' + lock.args
              + ' | query }}{{ with . | first | label "holder" }}{{ . }}{{ else }}nobody{{ end }}{{ else }}an unknown holder{{ end }}. Two processes doing leader-only work at once can corrupt what they manage.'),

    // The participant that led a lock has stopped answering without exiting. Its Lease
    // expires and a standby takes over (or nobody: LeaseNoLeader), and when it resumes it
    // acts as leader beside its successor until its renew deadline, which no scrape can catch
    // in time (docs/alerts.md#what-the-alerts-can-and-cannot-see). The hang is what can be
    // seen, and deleting the Pod before it resumes prevents the double leadership. A leader
    // that crashes, restarts or is deleted never matches: refused or removed targets fail
    // fast or vanish. 30s outlasts one lost scrape at scrape intervals up to 30s (a short
    // pause: the condition holds from the timeout to the next answered scrape); hack/detect's
    // SIGSTOP of 75 s pages.
    lib.alert('LeaseLeaderHung', 'critical', |||
      (
          max %(by)s (
            %(hung)s
          )
        and %(onLease)s
          %(holders)s
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseLeaderHung"}
    ||| % (p { by: lib.by(['namespace', 'lease', 'pod']), hung: std.strReplace(hung, '\n', '\n    '), holders: holders }),
              'Pod {{ $labels.pod }}, which led {{ $labels.namespace }}/{{ $labels.lease }}, stopped answering without exiting.',
              'Pod {{ $labels.pod }} reported leading lock {{ $labels.namespace }}/{{ $labels.lease }} when its scrapes began to time out, and it has not answered for more than '
              + lib.words(a.LeaseLeaderHung['for'])
              + ': the process is frozen (a pause, a suspended VM, CPU starvation) or its node is unreachable. The Lease names {{ with printf `' + lock.selector + '` ' + lock.args
              + ' | query }}{{ with . | first | label "holder" }}{{ . }}{{ else }}nobody{{ end }}{{ else }}an unknown holder{{ end }}. If the process resumes it acts as leader beside its successor until its renew deadline passes; deleting the Pod first prevents that.'),

    // A participant reports leading while the Lease names another holder, or nobody: it kept
    // reporting 1 after losing, or it leads another lock than the one its pod's namespace and
    // name say (a misconfigured election namespace). A handover makes this true for one
    // scrape interval of the old leader (its last 1 before it released), a resumed paused
    // leader for its renew deadline more (see above); 1m outlasts both at 30s scrapes and
    // four 15s lease durations (client-go's, kube-scheduler's, controller-runtime's default).
    //
    // A static Pod runs with hostNetwork, so its hostname is its node's and the Pod is named
    // <manifest>-<node>: kubeadm's kube-scheduler-<node> holds kube-system/kube-scheduler as
    // <node>_<uuid>. The second `unless` accepts a participant named <lock>-<holder host>, so
    // the control plane's own static Pods need no relabelling.
    lib.alert('LeaseLeaderDisagreement', 'warning', |||
      (
          %(leading)s
        unless %(onLeasePod)s
          %(holders)s
        unless %(onLeasePod)s
          label_join(%(holders)s, "pod", "-", "lease", "pod")
      )
      unless %(onLease)s
        lease_exporter:alert_exempt{alert=~"|LeaseLeaderDisagreement"}
    ||| % (p { onLeasePod: lib.on(['namespace', 'lease', 'pod']), leading: leading, holders: holders }),
              'Pod {{ $labels.pod }} reports leading {{ $labels.namespace }}/{{ $labels.lease }}, but the Lease does not name it.',
              'Pod {{ $labels.pod }} has reported leader_election_master_status 1 for lock {{ $labels.namespace }}/{{ $labels.lease }} for more than '
              + lib.words(a.LeaseLeaderDisagreement['for'])
              + ', but the Lease names {{ with printf `' + lock.selector + '` ' + lock.args
              + ' | query }}{{ with . | first | label "holder" }}{{ . }}{{ else }}nobody{{ end }}{{ else }}an unknown holder{{ end }}. The pod either keeps acting as leader after losing the Lease or elects on another lock than the one its namespace names.'),
  ]
