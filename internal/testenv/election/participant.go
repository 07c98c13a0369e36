package election

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
)

// BuildParticipant compiles ./participant (a client-go elector in its own process, with
// leader_election_master_status on /metrics) into dir.
func BuildParticipant(ctx context.Context, dir string) (string, error) {
	root, err := exporterproc.ModuleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "participant")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./internal/testenv/election/participant")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build participant: %w\n%s", err, b)
	}
	return out, nil
}

// Participant is a running participant process: Pod names it (its identity is
// <Pod>_<uuid>), Namespace/Lease is the lock it elects on.
type Participant struct {
	Namespace, Lease, Pod string
	Addr                  string // host:port of its /metrics

	cmd    *exec.Cmd
	stderr syncbuffer.Buffer
	done   chan struct{}
	http   *http.Client

	mu     sync.Mutex
	events []Event
}

// Event is a leadership callback the process reported: "leading" or "stopped", and when.
type Event struct {
	Kind string
	At   time.Time
}

// Components are the leader-election timings kube-scheduler, kube-controller-manager and
// controller-runtime default to.
var Components = Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

// StartParticipant runs bin against the API server of kubeconfig with timings tm.
func StartParticipant(ctx context.Context, bin, kubeconfig, namespace, lease, pod string, tm Timings) (*Participant, error) {
	p := &Participant{Namespace: namespace, Lease: lease, Pod: pod, done: make(chan struct{}),
		http: &http.Client{Timeout: 2 * time.Second}}
	p.cmd = exec.Command(bin, "--kubeconfig", kubeconfig, "--namespace", namespace, "--lease", lease, "--pod", pod,
		"--lease-duration", tm.LeaseDuration.String(), "--renew-deadline", tm.RenewDeadline.String(),
		"--retry-period", tm.RetryPeriod.String())
	p.cmd.Stderr = &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start participant %s: %w", pod, err)
	}
	addr := make(chan string, 1)
	go p.read(out, addr)
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	select {
	case p.Addr = <-addr:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("participant %s exited: %s", pod, p.stderr.String())
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
}

// read records the process's stdout lines: its address, then leadership events.
func (p *Participant) read(out io.Reader, addr chan<- string) {
	s := bufio.NewScanner(out)
	for s.Scan() {
		kind, arg, _ := strings.Cut(s.Text(), " ")
		if kind == "listening" {
			addr <- arg
			continue
		}
		if ns, err := strconv.ParseInt(arg, 10, 64); err == nil {
			p.mu.Lock()
			p.events = append(p.events, Event{Kind: kind, At: time.Unix(0, ns)})
			p.mu.Unlock()
		}
	}
}

// Events returns the leadership events so far.
func (p *Participant) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// LeadingSince is the start of the current leadership term, if the process believes it leads.
func (p *Participant) LeadingSince() (time.Time, bool) {
	ev := p.Events()
	if n := len(ev); n > 0 && ev[n-1].Kind == "leading" {
		return ev[n-1].At, true
	}
	return time.Time{}, false
}

// Status scrapes leader_election_master_status{name=Lease} from the process.
func (p *Participant) Status() (float64, error) {
	v, err := masterStatus(p.http, p.Addr, p.Lease)
	if err != nil {
		return 0, fmt.Errorf("participant %s: %w", p.Pod, err)
	}
	return v, nil
}

// masterStatus scrapes leader_election_master_status{name=lease} from the /metrics at addr,
// as client-go's leader-election metrics provider writes it.
func masterStatus(client *http.Client, addr, lease string) (float64, error) {
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	prefix := fmt.Sprintf("leader_election_master_status{name=%q} ", lease)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no %s... in /metrics", prefix)
}

// Pause stops the process (SIGSTOP) as a GC stall or a frozen VM would; Resume continues it.
func (p *Participant) Pause() error  { return p.cmd.Process.Signal(syscall.SIGSTOP) }
func (p *Participant) Resume() error { return p.cmd.Process.Signal(syscall.SIGCONT) }

// Stop ends the process gracefully (it releases the Lease if it holds it), even if paused.
func (p *Participant) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Signal(os.Kill)
		<-p.done
	}
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill would: it does not release.
func (p *Participant) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Logs is what the process wrote to stderr (client-go's klog).
func (p *Participant) Logs() string { return p.stderr.String() }
