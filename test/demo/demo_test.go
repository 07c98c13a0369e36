// Package demo tests `make demo` the way a new user meets it: from the repository root, with a
// fresh temporary directory, no standard input and Ctrl-C to stop. It checks what the README
// promises: the printed URLs, the demo's elections and node heartbeats on /metrics, the shipped
// rules in Prometheus, the failover every minute, a terminal free of errors, and that Ctrl-C,
// typed on a real (pseudo-)terminal, ends make with status 0 and leaves no process and no
// temporary directory behind.
//
// It runs the real `make demo`, so it needs what the demo needs (hack/deps.sh installs it).
package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

const (
	// startTimeout covers a cold start on a busy 2-core machine: control plane, four
	// components, the exporter's build, Prometheus and Alertmanager.
	startTimeout = 10 * time.Minute
	// failoverPeriod is the README's promise for orders/orders-worker: its leader is killed
	// every minute; the Lease then expires (15 s) and a follower takes it (retry 2 s).
	failoverPeriod = time.Minute + 15*time.Second + 2*time.Second
	// slack absorbs a loaded machine (scrapes, API latency, the race detector elsewhere).
	slack = 45 * time.Second
)

func TestMakeDemo(t *testing.T) {
	d := startDemo(t)
	urls := d.waitForURLs(t)
	t.Logf("demo up after %s: %v", time.Since(d.started).Round(time.Second), urls)
	if !strings.HasPrefix(urls["kubeconfig"], d.tmp+string(filepath.Separator)) {
		t.Errorf("kubeconfig %s is not under the demo's TMPDIR %s", urls["kubeconfig"], d.tmp)
	}

	metricsURL, promURL := urls["metrics"], strings.TrimSuffix(urls["prometheus"], "/alerts")
	waitFor(t, 2*time.Minute, "every demo election and node heartbeat on /metrics", func() error {
		return wantDemoLeases(metricsURL)
	})
	waitFor(t, time.Minute, "the status page lists the demo's elections", func() error {
		return wantStatusPage(urls["leases"])
	})
	waitFor(t, 2*time.Minute, "Prometheus lists the shipped alerting rules", func() error {
		return wantRules(promURL)
	})
	testFailover(t, metricsURL)

	// Ctrl-Z does nothing: it would stop the demo and not make, and the shell would never
	// get its terminal back. The demo keeps serving, and the Ctrl-C below still ends it.
	if _, err := d.keyboard.Write([]byte{0x1a}); err != nil {
		t.Fatalf("Ctrl-Z: %v", err)
	}
	time.Sleep(2 * time.Second)
	if _, err := exporterproc.ScrapeURL(metricsURL); err != nil {
		t.Errorf("after Ctrl-Z the demo's exporter does not answer: %v", err)
	}

	d.interrupt(t)
	if errs := terminalErrors(d.out.String()); len(errs) > 0 {
		t.Errorf("the demo's terminal shows errors or warnings a new user would take for faults:\n%s", strings.Join(errs, "\n"))
	}
}

// testFailover waits for the orders-worker leader to change, as the README promises once a
// minute, and checks the exporter counted it.
func testFailover(t *testing.T, metricsURL string) {
	first, err := exporterproc.ScrapeURL(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	holder, changes := holderOf(first, "orders", "orders-worker"), value(first, "lease_observed_holder_changes_total", "orders", "orders-worker")
	start := time.Now()
	waitFor(t, failoverPeriod+slack, "orders/orders-worker fails over (README: every minute)", func() error {
		s, err := exporterproc.ScrapeURL(metricsURL)
		if err != nil {
			return err
		}
		now := holderOf(s, "orders", "orders-worker")
		if now == "" || now == holder {
			return fmt.Errorf("holder still %q", holder)
		}
		if got := value(s, "lease_observed_holder_changes_total", "orders", "orders-worker"); got <= changes {
			return fmt.Errorf("holder %q -> %q but lease_observed_holder_changes_total stayed %v", holder, now, got)
		}
		t.Logf("orders-worker: %s -> %s after %s", holder, now, time.Since(start).Round(time.Second))
		return nil
	})
}

// demo is a running `make demo`, in a session of its own on a terminal, as in a user's shell.
type demo struct {
	cmd      *exec.Cmd
	keyboard *os.File // the terminal's other end
	tmp      string   // the demo's TMPDIR: everything it creates must be gone after Ctrl-C
	out      *syncbuffer.Buffer
	done     chan struct{}
	started  time.Time
}

func startDemo(t *testing.T) *demo {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	d := &demo{tmp: filepath.Join(t.TempDir(), "tmp"), out: &syncbuffer.Buffer{}, done: make(chan struct{})}
	if err := os.Mkdir(d.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	keyboard, tty, err := openTerminal()
	if err != nil {
		t.Fatal(err)
	}
	d.keyboard = keyboard
	d.cmd = exec.Command("make", "demo")
	d.cmd.Dir = root
	d.cmd.Env = userEnv(d.tmp)
	// A terminal to read from, on which nothing is typed but Ctrl-C: the demo must never
	// wait for input. Its output goes to the test.
	d.cmd.Stdin = tty
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	d.started = time.Now()
	err = d.cmd.Start()
	tty.Close()
	if err != nil {
		keyboard.Close()
		t.Fatalf("make demo: %v", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== make demo output =====\n%s", testsuite.Tail(d.out.String(), 150))
		}
		d.kill()
		keyboard.Close() // after: closing a terminal hangs up its session
	})
	return d
}

// userEnv is this process's environment as a user's shell would have it: no make or go test
// state, and TMPDIR pointing at tmp.
func userEnv(tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "KUBEBUILDER_ASSETS", "TMPDIR", "GOTMPDIR":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TMPDIR="+tmp)
}

var urlLine = regexp.MustCompile(`(?m)^\s+(metrics|leases|prometheus|alertmanager|kubeconfig):\s+(\S+)\s*$`)

// waitForURLs waits for the banner the README shows and returns its entries by name.
func (d *demo) waitForURLs(t *testing.T) map[string]string {
	deadline := time.After(startTimeout)
	for !strings.Contains(d.out.String(), "Press Ctrl-C to stop everything.") {
		select {
		case <-d.done:
			t.Fatalf("make demo exited before printing its URLs")
		case <-deadline:
			t.Fatalf("make demo printed no URLs within %s", startTimeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
	urls := map[string]string{}
	for _, m := range urlLine.FindAllStringSubmatch(d.out.String(), -1) {
		urls[m[1]] = m[2]
	}
	for _, name := range []string{"metrics", "leases", "prometheus", "alertmanager", "kubeconfig"} {
		if urls[name] == "" {
			t.Fatalf("the banner has no %s line", name)
		}
	}
	return urls
}

// interrupt types Ctrl-C on the demo's terminal, then checks that make ended as a clean stop
// reads, and that nothing the demo started is left: no process (every descendant inherited
// TMPDIR, whatever process group it moved to) and nothing in TMPDIR.
func (d *demo) interrupt(t *testing.T) {
	if _, err := d.keyboard.Write([]byte{0x03}); err != nil {
		t.Fatalf("Ctrl-C: %v", err)
	}
	select {
	case <-d.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("make demo still running 2 minutes after Ctrl-C")
	}
	// A clean stop reads as one: status 0, and no "make: *** [...] Error" or "Interrupt" line.
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("make demo exited %s after Ctrl-C, want status 0", d.cmd.ProcessState)
	}
	if m := regexp.MustCompile(`(?m)^make(\[\d+\])?: \*\*\*.*$`).FindString(d.out.String()); m != "" {
		t.Errorf("make reported a failure after Ctrl-C: %s", m)
	}
	var left []string
	waitFor(t, 20*time.Second, "no process of the demo left", func() error {
		if left = demoProcesses(d.tmp); len(left) > 0 {
			return fmt.Errorf("%d left:\n%s", len(left), strings.Join(left, "\n"))
		}
		return nil
	})
	entries, err := os.ReadDir(d.tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in TMPDIR: %s", filepath.Join(d.tmp, e.Name()))
	}
}

// kill ends whatever is left, for a test that failed before interrupt.
func (d *demo) kill() {
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	for _, p := range demoProcesses(d.tmp) {
		var pid int
		if _, err := fmt.Sscan(p, &pid); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
	}
}

// demoProcesses lists "pid cmdline" of every process whose environment has TMPDIR=tmp.
func demoProcesses(tmp string) []string {
	want := []byte("TMPDIR=" + tmp + "\x00")
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(environ, 0), want) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, e.Name()+" "+strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " "))
	}
	return found
}

// terminalErrors returns the lines logged at error or warning level (tint's ERR and WRN).
func terminalErrors(out string) []string {
	var bad []string
	level := regexp.MustCompile(`\b(ERR|WRN)\b`)
	for _, line := range strings.Split(out, "\n") {
		if level.MatchString(line) {
			bad = append(bad, line)
		}
	}
	return bad
}

// wantRules checks that Prometheus loaded every alert of alerts/lease-exporter.rules.yml.
func wantRules(promURL string) error {
	raw, err := os.ReadFile("../../alerts/lease-exporter.rules.yml")
	if err != nil {
		return err
	}
	want := regexp.MustCompile(`(?m)^\s*- alert: (\w+)`).FindAllStringSubmatch(string(raw), -1)
	if len(want) == 0 {
		return fmt.Errorf("no alerts found in alerts/lease-exporter.rules.yml")
	}
	resp, err := http.Get(promURL + "/api/v1/rules?type=alert")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Groups []struct {
				Rules []struct{ Name, Health string }
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("decode /api/v1/rules: %w", err)
	}
	loaded := map[string]string{}
	for _, g := range body.Data.Groups {
		for _, r := range g.Rules {
			loaded[r.Name] = r.Health
		}
	}
	for _, w := range want {
		if _, ok := loaded[w[1]]; !ok {
			return fmt.Errorf("alert %s not loaded (loaded: %v)", w[1], loaded)
		}
	}
	return nil
}

// demoLeases are the Leases the README says the demo runs, with their class.
var demoLeases = map[[2]string]string{
	{"payments", "payments-controller"}:        "leader-election",
	{"orders", "orders-worker"}:                "leader-election",
	{"batch", "report-singleton"}:              "leader-election",
	{"kube-system", "kube-scheduler"}:          "leader-election",
	{"kube-system", "kube-controller-manager"}: "leader-election",
	{"kube-node-lease", "node-a"}:              "node-heartbeat",
	{"kube-node-lease", "node-b"}:              "node-heartbeat",
	{"kube-node-lease", "node-c"}:              "node-heartbeat",
}

func wantDemoLeases(metricsURL string) error {
	s, err := exporterproc.ScrapeURL(metricsURL)
	if err != nil {
		return err
	}
	nodes := 0
	for key, class := range demoLeases {
		held := labels(s, "lease_held", key[0], key[1])
		info := labels(s, "lease_info", key[0], key[1])
		if class == "node-heartbeat" {
			// Summed up by default (docs/metrics.md): counted in lease_class_locks, with no
			// per-lock series but the overdue one's.
			nodes++
			if held != nil || info != nil {
				return fmt.Errorf("%s/%s: lease_held or lease_info for a node-heartbeat Lease; the default leaves them to --metrics.node-heartbeats=per-lease", key[0], key[1])
			}
			continue
		}
		// Every other lock has lease_held and lease_info (the holder).
		switch {
		case held == nil:
			return fmt.Errorf("no lease_held for %s/%s", key[0], key[1])
		case held["class"] != class:
			return fmt.Errorf("%s/%s has class %q, want %q", key[0], key[1], held["class"], class)
		case info == nil:
			return fmt.Errorf("no lease_info for %s/%s", key[0], key[1])
		case info["holder"] == "":
			return fmt.Errorf("%s/%s has no holder", key[0], key[1])
		}
	}
	counted := 0.0
	for _, c := range s.Series("lease_class_locks", map[string]string{"class": "node-heartbeat"}) {
		counted += c.Value
	}
	if counted != float64(nodes) {
		return fmt.Errorf("lease_class_locks counts %v node heartbeats, want the demo's %d", counted, nodes)
	}
	return nil
}

// wantStatusPage checks that the banner's status page serves HTML naming every demo election,
// and that its JSON twin names a holder for each.
func wantStatusPage(leasesURL string) error {
	resp, err := httpClient.Get(leasesURL)
	if err != nil {
		return err
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %v", leasesURL, resp.Status, err)
	}
	apiURL := strings.TrimSuffix(leasesURL, "/leases") + "/api/v1/leases?class=leader-election"
	resp, err = httpClient.Get(apiURL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var list struct {
		Leases []struct{ Namespace, Name, Holder string } `json:"leases"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return fmt.Errorf("%s: %w", apiURL, err)
	}
	for key, class := range demoLeases {
		if class != "leader-election" {
			continue
		}
		if !bytes.Contains(page, []byte(">"+key[1]+"<")) {
			return fmt.Errorf("%s does not show %s/%s", leasesURL, key[0], key[1])
		}
		found := false
		for _, l := range list.Leases {
			found = found || (l.Namespace == key[0] && l.Name == key[1] && l.Holder != "")
		}
		if !found {
			return fmt.Errorf("%s names no holder for %s/%s", apiURL, key[0], key[1])
		}
	}
	return nil
}

// waitFor polls cond every second until it returns nil (testsuite.Eventually); its last
// error says what was still missing.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testsuite.Eventually(t, timeout, time.Second, what, func() (bool, string) {
		if err := cond(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}
