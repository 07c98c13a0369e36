package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// participantTargets is the file Prometheus discovers the job "participants" from: each
// participant process as a PodMonitor would scrape its Pod, with the target labels namespace
// and pod. A file rather than static targets, so tests add and remove participants while
// Prometheus runs.
type participantTargets struct {
	path string
	mu   sync.Mutex
	bin  string // the participant binary, built on first use
	set  map[string]map[string]string
}

func newParticipantTargets(dir string) (*participantTargets, error) {
	t := &participantTargets{path: filepath.Join(dir, "participants.json"), set: map[string]map[string]string{}}
	return t, t.write()
}

func (t *participantTargets) scrapeConfig() string {
	return fmt.Sprintf("  - job_name: participants\n    file_sd_configs: [{files: [%q], refresh_interval: 1s}]\n", t.path)
}

// write replaces the file in one rename, so Prometheus never reads half of it.
func (t *participantTargets) write() error {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := []group{}
	for addr, labels := range t.set {
		groups = append(groups, group{[]string{addr}, labels})
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return err
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, t.path)
}

func (t *participantTargets) update(addr string, labels map[string]string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if labels == nil {
		delete(t.set, addr)
	} else {
		t.set[addr] = labels
	}
	return t.write()
}

func (t *participantTargets) binary() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bin != "" {
		return t.bin, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := election.BuildParticipant(ctx, filepath.Dir(t.path))
	t.bin = bin
	return bin, err
}

// participant starts a participant process electing on lockNS/lease, scraped as Pod pod in
// namespace podNS (normally the lock's), stopped (releasing) at the end of the test; its
// log is printed if the test failed.
func (s *scenario) participant(podNS, lockNS, lease, pod string) *election.Participant {
	s.t.Helper()
	return s.participantTimed(podNS, lockNS, lease, pod, pauseTimings)
}

// pauseTimings are testPausedLeader's short timings (and the participants' defaults): lease
// 4s, renew deadline 3s, retry period 500ms.
var pauseTimings = election.Timings{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}

// participantTimed is participant with timings tm.
func (s *scenario) participantTimed(podNS, lockNS, lease, pod string, tm election.Timings) *election.Participant {
	s.t.Helper()
	bin, err := env.participants.binary()
	if err != nil {
		s.t.Fatal(err)
	}
	p, err := election.StartParticipant(context.Background(), bin, env.CP.KubeconfigPath(), lockNS, lease, pod, tm)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := env.participants.update(p.Addr, map[string]string{"namespace": podNS, "pod": pod}); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		p.Stop()
		if err := env.participants.update(p.Addr, nil); err != nil {
			s.t.Error(err)
		}
		if s.t.Failed() {
			s.t.Logf("===== participant %s log =====\n%s", pod, testsuite.Tail(p.Logs(), 15))
		}
	})
	return p
}
