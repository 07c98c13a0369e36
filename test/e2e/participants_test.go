package e2e

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/promstack"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// participantTargets is the job "participants": each participant process as a PodMonitor
// would scrape its Pod, with the target labels namespace and pod.
type participantTargets struct {
	*promstack.FileTargets
	dir string
	mu  sync.Mutex
	bin string // the participant binary, built on first use
}

func newParticipantTargets(dir string) (*participantTargets, error) {
	f, err := promstack.NewFileTargets(filepath.Join(dir, "participants.json"))
	return &participantTargets{FileTargets: f, dir: dir}, err
}

func (t *participantTargets) scrapeConfig() string { return t.ScrapeConfig("participants") }

func (t *participantTargets) binary() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bin != "" {
		return t.bin, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := election.BuildParticipant(ctx, t.dir)
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
	if err := env.participants.Set(p.Addr, map[string]string{"namespace": podNS, "pod": pod}); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		p.Stop()
		if err := env.participants.Set(p.Addr, nil); err != nil {
			s.t.Error(err)
		}
		if s.t.Failed() {
			s.t.Logf("===== participant %s log =====\n%s", pod, testsuite.Tail(p.Logs(), 15))
		}
	})
	return p
}
