package integration_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/chromedp/chromedp"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// coordinatedScrape is what one scrape says about a coordinated Lease and its candidates.
type coordinatedScrape struct {
	text                   string
	watched                float64
	holder, preferred      string
	strategy               string
	candidates             map[string]map[string]string // candidate -> lease_candidate_info labels
	total, fresh, isPrefer float64                      // NaN when absent
}

func scrapeCoordinated(exp *exporterproc.Exporter, ns, lease string) (coordinatedScrape, error) {
	s, err := exp.Scrape()
	if err != nil {
		return coordinatedScrape{}, err
	}
	c := coordinatedScrape{text: s.Text, candidates: map[string]map[string]string{}}
	match := map[string]string{"namespace": ns, "lease": lease}
	one := func(metric string) float64 {
		if xs := s.Series(metric, match); len(xs) == 1 {
			return xs[0].Value
		}
		return -1
	}
	if xs := s.Series("lease_exporter_lease_candidates_watched", nil); len(xs) == 1 {
		c.watched = xs[0].Value
	}
	if infos := s.Series("lease_info", match); len(infos) == 1 {
		c.holder, c.preferred, c.strategy = infos[0].Labels["holder"], infos[0].Labels["preferred_holder"], infos[0].Labels["strategy"]
	}
	for _, x := range s.Series("lease_candidate_info", match) {
		c.candidates[x.Labels["candidate"]] = x.Labels
	}
	c.total, c.fresh, c.isPrefer = one("lease_candidates"), one("lease_candidates_fresh"), one("lease_holder_is_preferred")
	return c, nil
}

// untilCoordinated scrapes until cond accepts, failing the test with the last scrape's
// coordinated-election lines after timeout.
func untilCoordinated(t *testing.T, exp *exporterproc.Exporter, ns, lease, what string, cond func(coordinatedScrape) error) coordinatedScrape {
	t.Helper()
	end := time.Now().Add(2 * deadline)
	for {
		c, err := scrapeCoordinated(exp, ns, lease)
		if err == nil {
			if err = cond(c); err == nil {
				return c
			}
		}
		if time.Now().After(end) {
			var lines []string
			for _, l := range strings.Split(c.text, "\n") {
				if strings.Contains(l, `lease="`+lease+`"`) || strings.Contains(l, "candidates_watched") {
					lines = append(lines, l)
				}
			}
			t.Fatalf("%s: not within %s; last: %v\n%s", what, 2*deadline, err, strings.Join(lines, "\n"))
		}
		time.Sleep(poll)
	}
}

// With coordinated leader election on (the gate on the API server and the components, and
// coordination.k8s.io/v1beta1 served), two real kube-schedulers and two real
// kube-controller-managers register LeaseCandidates and
// the API server elects between them. The exporter must show the candidates with their
// versions, the strategy, the preferred holder and the holder, follow a crash of the leader,
// and show an older candidate (an upgrade in progress, one minor older, written through the
// API as a component of that version would) as the API server prefers it.
func TestCoordinatedLeaderElectionCandidates(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{APIServerArgs: []string{
		"--feature-gates=CoordinatedLeaderElection=true",
		"--runtime-config=coordination.k8s.io/v1beta1=true",
	}})
	client := kubernetes.NewForConfigOrDie(cp.Config())
	exp := startExporterAs(t, cp, "exporter-candidates")
	// What this API server serves, for docs/compatibility.md: v1beta1 (enabled above), and
	// v1alpha2 only if an alpha runtime-config enables it.
	for _, v := range []string{"v1alpha2", "v1beta1"} {
		_, err := client.Discovery().ServerResourcesForGroupVersion("coordination.k8s.io/" + v)
		t.Logf("discovery coordination.k8s.io/%s: served %v (%v)", v, err == nil, err)
	}

	t.Run(controlplane.KubeControllerManager, func(t *testing.T) {
		t.Parallel() // the two elections are independent
		coordinatedFailover(t, cp, client, exp, controlplane.KubeControllerManager)
	})
	t.Run(controlplane.KubeScheduler, func(t *testing.T) {
		t.Parallel()
		testCoordinatedUpgrade(t, cp, client, exp)
	})
	if !slices.ContainsFunc(strings.Split(exp.Logs(), "\n"), func(l string) bool {
		return strings.Contains(l, `"msg":"watching LeaseCandidates"`) && strings.Contains(l, `"version":"coordination.k8s.io/v1beta1"`)
	}) {
		t.Errorf("the exporter did not log that it watches coordination.k8s.io/v1beta1 LeaseCandidates:\n%s", testsuite.Tail(exp.Logs(), 20))
	}
}

// coordinatedFailover starts two replicas of the component name with coordinated election,
// checks what the exporter shows of their candidates and election, kills the leader and
// checks the re-election; it returns the scrapes before and after.
func coordinatedFailover(t *testing.T, cp *controlplane.ControlPlane, client kubernetes.Interface, exp *exporterproc.Exporter, name string) (before, after coordinatedScrape) {
	const ns = "kube-system"
	procs := make([]*controlplane.Process, 2)
	for i := range procs {
		if i > 0 {
			startInLaterSecond(t, client, ns, name, i)
		}
		p, err := cp.StartComponent(context.Background(), name, "--feature-gates=CoordinatedLeaderElection=true")
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = p
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("===== %s log (%s), last 40 lines =====\n%s", p.Name(), p.LogPath(), testsuite.Tail(p.Logs(), 40))
			}
			_ = p.Stop()
		})
	}

	var leader *controlplane.Process
	before = untilCoordinated(t, exp, ns, name, "two candidates, one elected, and the exporter shows them", func(c coordinatedScrape) error {
		if c.watched != 1 {
			return fmt.Errorf("lease_exporter_lease_candidates_watched %v, want 1", c.watched)
		}
		if len(c.candidates) != 2 || c.total != 2 || c.fresh != 2 {
			return fmt.Errorf("%d lease_candidate_info series, lease_candidates %v, fresh %v; want 2 each", len(c.candidates), c.total, c.fresh)
		}
		for cand, labels := range c.candidates {
			if !strings.HasPrefix(labels["binary_version"], "1.") || labels["emulation_version"] == "" || labels["strategy"] != string(coordinationv1.OldestEmulationVersion) {
				return fmt.Errorf("candidate %s labels %v: want versions and strategy OldestEmulationVersion", cand, labels)
			}
		}
		// The API server elects by writing the holder; it writes spec.preferredHolder only
		// when it wants a different one, so a fresh election has none and no
		// lease_holder_is_preferred series.
		if c.strategy != string(coordinationv1.OldestEmulationVersion) || c.holder == "" {
			return fmt.Errorf("lease_info strategy %q holder %q: want OldestEmulationVersion and a holder", c.strategy, c.holder)
		}
		if err := preferredConsistent(c); err != nil {
			return err
		}
		if _, ok := c.candidates[c.holder]; !ok {
			return fmt.Errorf("holder %q is none of the candidates %v", c.holder, keys(c.candidates))
		}
		lease, err := client.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if preferred := ptr.Deref(lease.Spec.PreferredHolder, ""); holderOf(lease) != c.holder || preferred != c.preferred {
			return fmt.Errorf("API server holder %q preferred %q, exporter %q/%q", holderOf(lease), preferred, c.holder, c.preferred)
		}
		var leading []*controlplane.Process
		for _, p := range procs {
			if acquiredLog.MatchString(p.Logs()) {
				leading = append(leading, p)
			}
		}
		if len(leading) != 1 {
			return fmt.Errorf("%d of 2 %ss logged %q", len(leading), name, acquiredLog)
		}
		leader = leading[0]
		return nil
	})
	t.Logf("%s: candidates %v; %s leads", name, keys(before.candidates), before.holder)

	if err := leader.Kill(); err != nil { // no release: the Lease must expire, the API server re-elect
		t.Fatal(err)
	}
	killed := time.Now()
	after = untilCoordinated(t, exp, ns, name, "the surviving candidate is preferred and takes over", func(c coordinatedScrape) error {
		if c.holder == before.holder || c.holder == "" {
			return fmt.Errorf("holder %q", c.holder)
		}
		if _, ok := before.candidates[c.holder]; !ok {
			return fmt.Errorf("new holder %q is not a candidate of before (%v)", c.holder, keys(before.candidates))
		}
		return preferredConsistent(c)
	})
	t.Logf("%s: %s killed; %s took over, exported %s later", name, before.holder, after.holder, time.Since(killed).Round(100*time.Millisecond))
	return before, after
}

// startInLaterSecond waits until the n replicas started so far have registered their
// LeaseCandidates for lease and the clock has passed the second the newest was created in.
// Kubernetes' election controller (1.34-1.36) breaks a tie of versions by creationTimestamp,
// which has whole seconds, and two candidates created in the same second tie both ways: it
// then elects whichever its cache lists first, in no fixed order. In CI it flipped the
// kube-controller-managers' holder every 10 to 40 s for two minutes and neither ever acquired
// (what the exporter showed, correctly: lease_held 0 and holder changes climbing).
func startInLaterSecond(t *testing.T, client kubernetes.Interface, ns, lease string, n int) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		list, err := client.CoordinationV1beta1().LeaseCandidates(ns).List(context.Background(), metav1.ListOptions{})
		var newest time.Time
		registered := 0
		if err == nil {
			for _, c := range list.Items {
				if c.Spec.LeaseName == lease {
					registered++
					if c.CreationTimestamp.After(newest) {
						newest = c.CreationTimestamp.Time
					}
				}
			}
		}
		if registered >= n {
			time.Sleep(time.Until(newest.Add(time.Second + 50*time.Millisecond)))
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%d of %d %s LeaseCandidates registered within %s (%v)", registered, n, lease, deadline, err)
		}
		time.Sleep(poll)
	}
}

// testCoordinatedUpgrade runs the kube-scheduler failover, then adds a candidate of an older
// version (an upgrade in progress) and checks the API server prefers it while another holds.
func testCoordinatedUpgrade(t *testing.T, cp *controlplane.ControlPlane, client kubernetes.Interface, exp *exporterproc.Exporter) {
	const ns, name = "kube-system", controlplane.KubeScheduler
	before, _ := coordinatedFailover(t, cp, client, exp, name)
	// An upgrade in progress: a candidate one minor older than the running schedulers (1.35 on
	// 1.36 binaries, 1.33 on 1.34), written as its component would.
	var minor int
	for _, labels := range before.candidates {
		if _, err := fmt.Sscanf(labels["emulation_version"], "1.%d.", &minor); err != nil {
			t.Fatalf("emulation_version %q: %v", labels["emulation_version"], err)
		}
	}
	olderVersion := fmt.Sprintf("1.%d.0", minor-1)
	renew := metav1.NowMicro()
	older := &coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "older-scheduler"},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: name, RenewTime: &renew, BinaryVersion: olderVersion,
			EmulationVersion: olderVersion, Strategy: coordinationv1.OldestEmulationVersion}}
	if _, err := client.CoordinationV1beta1().LeaseCandidates(ns).Create(context.Background(), older, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Answer the API server's pings as client-go's candidate does, so it stays eligible.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go answerPings(ctx, client, ns, older.Name)
	untilCoordinated(t, exp, ns, name, "the older candidate is exported beside the others", func(c coordinatedScrape) error {
		labels, ok := c.candidates["older-scheduler"]
		if !ok || labels["binary_version"] != olderVersion || labels["emulation_version"] != olderVersion {
			return fmt.Errorf("older-scheduler labels %v", labels)
		}
		// The killed scheduler's candidate stays until garbage-collected: 3 candidates, the
		// killed one not renewing but still fresh within 10 minutes.
		if c.total != float64(len(before.candidates)+1) {
			return fmt.Errorf("lease_candidates %v, want %d", c.total, len(before.candidates)+1)
		}
		return nil
	})

	preferred := untilCoordinated(t, exp, ns, name, "the API server prefers the older candidate and the exporter says the holder is not it", func(c coordinatedScrape) error {
		if c.preferred != "older-scheduler" {
			return fmt.Errorf("preferred_holder %q, want older-scheduler (oldest emulation version)", c.preferred)
		}
		if c.holder == "older-scheduler" {
			return nil // the API server already wrote it as holder; consistency checked below
		}
		if c.isPrefer != 0 {
			return fmt.Errorf("lease_holder_is_preferred %v while %q holds and older-scheduler is preferred", c.isPrefer, c.holder)
		}
		return nil
	})
	if err := preferredConsistent(preferred); err != nil {
		t.Error(err)
	}
	t.Logf("older-scheduler preferred; holder %q, lease_holder_is_preferred %v", preferred.holder, preferred.isPrefer)
	checkCandidatesPage(t, exp, ns, name, len(before.candidates)+1)
	kubectlShowsCoordinatedElection(t, cp, exp, ns, name)
	// 1.36's deprecation warning for v1beta1 comes with every list and watch (1.34 and 1.35
	// send none).
	if n := strings.Count(exp.Logs(), "LeaseCandidate is deprecated"); n > 1 {
		t.Errorf("the v1beta1 deprecation warning logged %d times, want at most once", n)
	}
}

// preferredConsistent checks lease_holder_is_preferred against lease_info: present exactly
// when a preferred holder is named, 1 exactly when it holds.
func preferredConsistent(c coordinatedScrape) error {
	switch {
	case c.preferred == "" && c.isPrefer != -1:
		return brokenf("lease_holder_is_preferred %v without a preferred holder", c.isPrefer)
	case c.preferred != "" && c.isPrefer != boolValue(c.holder == c.preferred):
		return fmt.Errorf("lease_holder_is_preferred %v with holder %q, preferred %q", c.isPrefer, c.holder, c.preferred)
	}
	return nil
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// answerPings renews the LeaseCandidate whenever the API server pinged it since its last
// renewal, as client-go's LeaseCandidate does, until ctx is done.
func answerPings(ctx context.Context, client kubernetes.Interface, ns, name string) {
	for ctx.Err() == nil {
		lc, err := client.CoordinationV1beta1().LeaseCandidates(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && lc.Spec.PingTime != nil && (lc.Spec.RenewTime == nil || lc.Spec.PingTime.After(lc.Spec.RenewTime.Time)) {
			lc.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			_, _ = client.CoordinationV1beta1().LeaseCandidates(ns).Update(ctx, lc, metav1.UpdateOptions{})
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// On an API server that does not serve LeaseCandidates (every tested version's default) and
// with --lease-candidates=false, the feature is off: lease_exporter_lease_candidates_watched 0,
// one info line saying why, and the Leases are exported as ever.
func TestLeaseCandidatesOffWhenNotServedOrTurnedOff(t *testing.T) {
	ns := newNamespace(t, "candidates-off")
	createHeldLease(t, env.Client, ns, "plain")
	for _, tc := range []struct {
		flag, msg string
	}{
		{"--lease-candidates=true", "not watching LeaseCandidates: coordinated leader election is not available to the exporter"},
		{"--lease-candidates=false", "not watching LeaseCandidates: turned off by option"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			exp := env.StartReady(t, env.Bin, tc.flag, "--log.format=json")
			newProbe(exp, ns, "plain").until(t, deadline, poll, "the Lease is exported", func(m leaseMetrics) error {
				if m.infos != 1 {
					return fmt.Errorf("%d lease_info series", m.infos)
				}
				return nil
			})
			c, err := scrapeCoordinated(exp, ns, "plain")
			if err != nil {
				t.Fatal(err)
			}
			if c.watched != 0 || c.total != -1 || c.isPrefer != -1 {
				t.Errorf("lease_exporter_lease_candidates_watched %v, lease_candidates %v, lease_holder_is_preferred %v: want 0 and no series", c.watched, c.total, c.isPrefer)
			}
			var lines []string
			for _, line := range strings.Split(exp.Logs(), "\n") {
				if strings.Contains(line, "LeaseCandidates") {
					lines = append(lines, line)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], `"level":"INFO"`) || !strings.Contains(lines[0], tc.msg) {
				t.Errorf("want one info line %q about LeaseCandidates, got %d:\n%s", tc.msg, len(lines), strings.Join(lines, "\n"))
			}
		})
	}
}

// checkCandidatesPage reads the scheduler Lease's status page in Chromium: it names
// older-scheduler as the API server's preferred holder, and lists all n candidates,
// older-scheduler's row marked preferred and fresh.
func checkCandidatesPage(t *testing.T, exp *exporterproc.Exporter, ns, name string, n int) {
	t.Helper()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(exp.URL()+"/leases/"+ns+"/"+name), chromedp.WaitVisible(chromedp.CSS("#candidates"))); err != nil {
		t.Fatal(err)
	}
	got := eval[string](t, ctx, `document.getElementById("preferred").textContent + " | " + Array.from(document.querySelectorAll("#candidates tbody tr")).map(r =>
		r.dataset.name + (r.cells[0].textContent.includes("(preferred)") ? " preferred" : "") + " " + r.querySelector("td.fresh").textContent).join(", ")`)
	head, rows, _ := strings.Cut(got, " | ")
	if head != "older-scheduler" || strings.Count(rows, ", ")+1 != n || !strings.Contains(rows, "older-scheduler preferred yes") || strings.Count(rows, "preferred") != 1 {
		t.Errorf("the status page shows preferred %q and candidates %q; want older-scheduler preferred, fresh, among %d", head, rows, n)
	}
	screenshot(t, ctx, "leases-coordinated.png")
}
