package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/controlplane"
	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/syncbuffer"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// Issue 37: kubectl lease, run by real kubectl (the control plane's own version) with the
// plugin on PATH, against real electors: client-go's on Leases, the Python client's on a
// ConfigMap, a client-go holder whose clock is a minute ahead and one a minute behind. Its
// one-shot judgement must be the exporter's for the same locks at the same moment, -w must
// follow a failover in a real terminal, and bad input must end in one line and exit 1.

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// kubectlLease runs `kubectl lease args...` as a user would: real kubectl finds the plugin
// on PATH (hack/build.sh's release build), kubeconfig from KUBECONFIG.
func kubectlLease(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"lease"}, args...)...)
	cmd.Env = pluginEnv(t, kubeconfig)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("kubectl lease %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// pluginEnv is the environment with kubectl and the plugin first on PATH.
func pluginEnv(t *testing.T, kubeconfig string) []string {
	t.Helper()
	pluginOnce.Do(func() {
		pluginDir = filepath.Join(env.Dir, "plugin")
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		root, err := exporterproc.ModuleRoot()
		if err != nil {
			pluginErr = err
			return
		}
		cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "build.sh"), filepath.Join(pluginDir, "kubectl-lease"), "kubectl-lease")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			pluginErr = fmt.Errorf("build kubectl-lease: %w\n%s", err, b)
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return append(os.Environ(), "KUBECONFIG="+kubeconfig,
		"PATH="+pluginDir+string(os.PathListSeparator)+env.CP.AssetsDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// kubectlLocks are the electors of TestKubectlLease: a client-go pool on a Lease, the Python
// client's ConfigMapLock, and two client-go holders with skewed clocks.
type kubectlLocks struct {
	ns     string
	pool   *election.Pool
	ahead  *election.Candidate
	behind *election.Candidate
	exp    *exporterproc.Exporter
}

func startKubectlLocks(t *testing.T) *kubectlLocks {
	t.Helper()
	if err := election.CheckPython(false); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := &kubectlLocks{ns: newNamespace(t, "kubectl")}
	var err error
	if k.pool, err = election.StartPool(ctx, env.Client, k.ns, "orders", "orders", 2, election.Fast, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.pool.StopAll)
	py, err := election.StartPython(election.PythonOptions{Kubeconfig: env.CP.KubeconfigPath(), Dir: t.TempDir(),
		Namespace: k.ns, Name: "py-lock", Identity: "py-a", Lock: election.PythonConfigMap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		py.Kill()
		if t.Failed() {
			t.Logf("===== python elector log =====\n%s", testsuite.Tail(py.Log(), 30))
		}
	})
	for _, s := range []struct {
		c    **election.Candidate
		skew time.Duration
		name string
	}{{&k.ahead, time.Minute, "clock-ahead"}, {&k.behind, -time.Minute, "clock-behind"}} {
		*s.c, err = election.StartConfig(ctx, env.Client, election.Config{Namespace: k.ns, Name: s.name, Identity: s.name + "-holder",
			Timings: skewTimings, Skew: s.skew})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup((*s.c).Stop)
	}
	k.exp = env.StartReady(t, env.Bin, "--namespaces="+k.ns, "--locks=leases,configmaps")
	testsuite.Eventually(t, deadline, poll, "the exporter shows four held locks and both skews measured", func() (bool, string) {
		l, err := exporterList(k.exp, k.ns)
		if err != nil {
			return false, err.Error()
		}
		held, skews := 0, 0
		for _, x := range l.Leases {
			if x.Held {
				held++
			}
			if x.HolderClockSkewSeconds != nil && strings.HasPrefix(x.Name, "clock-") {
				skews++
			}
		}
		return held == 4 && skews == 2, fmt.Sprintf("%d held, %d skews measured: %+v", held, skews, l.Leases)
	})
	return k
}

func exporterList(exp *exporterproc.Exporter, ns string) (api.List, error) {
	var l api.List
	resp, err := http.Get(exp.URL() + "/api/v1/leases?namespace=" + ns)
	if err != nil {
		return l, err
	}
	defer resp.Body.Close()
	return l, json.NewDecoder(resp.Body).Decode(&l)
}

// pluginList is kubectl lease -o json's answer, the fields compared.
type pluginList struct {
	Clock  string `json:"clock"`
	Leases []struct {
		api.Lease
		RenewTimeAheadSeconds *float64 `json:"renew_time_ahead_seconds"`
	} `json:"leases"`
}

func TestKubectlLease(t *testing.T) {
	k := startKubectlLocks(t)
	kubeconfig := env.CP.KubeconfigPath()
	t.Run("PluginListFindsIt", func(t *testing.T) {
		cmd := exec.Command("kubectl", "plugin", "list")
		cmd.Env = pluginEnv(t, kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), filepath.Join(pluginDir, "kubectl-lease")) {
			t.Errorf("kubectl plugin list does not find kubectl-lease (%v):\n%s", err, out)
		}
	})
	t.Run("ListIsStreamed", func(t *testing.T) { listIsStreamed(t, k) })
	t.Run("JSONAgreesWithTheExporter", func(t *testing.T) { jsonAgreesWithExporter(t, k, kubeconfig) })
	t.Run("TableWideAndNames", func(t *testing.T) { tableWideAndNames(t, k, kubeconfig) })
	t.Run("DescribeWithHistory", func(t *testing.T) { describeWithHistory(t, k, kubeconfig) })
	t.Run("BadInputOneLineExit1", func(t *testing.T) { badInput(t, k, kubeconfig) })
	// Last: it kills the pool's leader.
	t.Run("WatchFollowsAFailoverInATerminal", func(t *testing.T) { watchInTerminal(t, k, kubeconfig) })
}

// The one-shot JSON says, for every lock on which a single read can judge as the exporter
// judges (every lock but the holder whose clock is behind, see below), what the exporter's
// JSON API says at the same moment: holder, held, standing, healthy and problems. The holder
// a minute ahead is flagged skewed by both: the exporter measured it on live renewals, the
// plugin sees its renewTime in the API server's future.
func jsonAgreesWithExporter(t *testing.T, k *kubectlLocks, kubeconfig string) {
	testsuite.Eventually(t, deadline, poll, "kubectl lease -o json and the exporter agree on every lock", func() (bool, string) {
		out, stderr, code := kubectlLease(t, kubeconfig, "-n", k.ns, "--locks", "leases,configmaps", "-o", "json")
		want, err := exporterList(k.exp, k.ns)
		if code != 0 || err != nil {
			return false, fmt.Sprintf("exit %d %s; exporter: %v", code, stderr, err)
		}
		var got pluginList
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			return false, fmt.Sprintf("%v: %s", err, out)
		}
		if got.Clock != "api-server" {
			return false, "clock " + got.Clock + ", want api-server"
		}
		exp := map[string]api.Lease{}
		for _, l := range want.Leases {
			exp[l.Kind+"/"+l.Name] = l
		}
		var diffs []string
		for _, l := range got.Leases {
			e, ok := exp[l.Kind+"/"+l.Name]
			delete(exp, l.Kind+"/"+l.Name)
			if l.Name == "clock-behind" {
				// A single read sees a renewTime a minute old: expired to it, held to the
				// exporter, which watched the renewals. -w is the answer (below); the docs say so.
				if l.Standing != "expired" || e.Standing != "on_time" {
					diffs = append(diffs, fmt.Sprintf("clock-behind: plugin %s, exporter %s; want expired and on_time", l.Standing, e.Standing))
				}
				continue
			}
			if !ok || l.Holder != e.Holder || l.Held != e.Held || l.Standing != e.Standing || l.Healthy != e.Healthy ||
				strings.Join(l.Problems, ";") != strings.Join(e.Problems, ";") || l.Class != e.Class {
				diffs = append(diffs, fmt.Sprintf("%s/%s: plugin %s %v %s healthy %v %q, exporter %s %v %s healthy %v %q",
					l.Kind, l.Name, l.Holder, l.Held, l.Standing, l.Healthy, l.Problems, e.Holder, e.Held, e.Standing, e.Healthy, e.Problems))
			}
			if l.Name == "clock-ahead" && (l.RenewTimeAheadSeconds == nil || *l.RenewTimeAheadSeconds < 55) {
				diffs = append(diffs, fmt.Sprintf("clock-ahead: renew_time_ahead_seconds %v, want about 60", l.RenewTimeAheadSeconds))
			}
		}
		for key := range exp {
			diffs = append(diffs, key+": exported, not listed by the plugin")
		}
		return len(diffs) == 0 && len(got.Leases) == 4, strings.Join(diffs, "\n")
	})
}

// The table names every lock with its holder and standing, the skewed holder flagged, the
// clock it judged by on stderr; -o wide adds the wide columns; -o name prints kubectl's names.
func tableWideAndNames(t *testing.T, k *kubectlLocks, kubeconfig string) {
	out, stderr, code := kubectlLease(t, kubeconfig, "-n", k.ns, "--locks", "leases,configmaps")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^NAME\s+KIND\s+CLASS\s+HOLDER\s+STATE\s+RENEWED\s+DURATION\s+TRANSITIONS$`),
		regexp.MustCompile(`(?m)^orders\s+Lease\s+leader-election\s+orders-\d\s+on_time\s+`),
		regexp.MustCompile(`(?m)^py-lock\s+ConfigMap\s+leader-election\s+py-a\s+on_time\s+`),
		regexp.MustCompile(`(?m)^clock-ahead\s+Lease\s+leader-election\s+clock-ahead-holder\s+on_time,skewed\s+`),
	} {
		if !want.MatchString(out) {
			t.Errorf("table lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "by the API server's clock (Date header") {
		t.Errorf("stderr does not say which clock judged: %q", stderr)
	}
	t.Logf("kubectl lease -n %s --locks leases,configmaps (docs/kubectl-plugin.md's capture):\n%s%s", k.ns, out, stderr)
	wide, _, _ := kubectlLease(t, kubeconfig, "-n", k.ns, "-o", "wide")
	if !regexp.MustCompile(`(?m)^NAME\s+.*TRANSITIONS\s+ACQUIRED\s+PREFERRED HOLDER\s+STRATEGY\s+OWNER$`).MatchString(wide) {
		t.Errorf("-o wide lacks its columns:\n%s", wide)
	}
	names, _, _ := kubectlLease(t, kubeconfig, "-n", k.ns, "--locks", "leases,configmaps", "-o", "name")
	for _, want := range []string{"lease.coordination.k8s.io/orders\n", "configmap/py-lock\n"} {
		if !strings.Contains(names, want) {
			t.Errorf("-o name lacks %q:\n%s", want, names)
		}
	}
	cols, _, _ := kubectlLease(t, kubeconfig, "-n", k.ns, "--locks", "leases,configmaps", "-o", "custom-columns=NAME:.name,KIND:.kind,STATE:.standing")
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`(?m)^NAME\s+KIND\s+STATE$`), regexp.MustCompile(`(?m)^py-lock\s+ConfigMap\s+on_time$`)} {
		if !want.MatchString(cols) {
			t.Errorf("-o custom-columns lacks %s:\n%s", want, cols)
		}
	}
}

// describe reads the history from the exporter (--exporter) and says what it cannot know
// without one.
func describeWithHistory(t *testing.T, k *kubectlLocks, kubeconfig string) {
	out, stderr, code := kubectlLease(t, kubeconfig, "describe", k.ns+"/orders", "--exporter", k.exp.URL())
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^Holder:\s+orders-\d$`), regexp.MustCompile(`(?m)^State:\s+on_time$`),
		regexp.MustCompile(`(?m)^Candidates:\s+<not served: this API server has no LeaseCandidates`),
		regexp.MustCompile(`(?m)^History \(from http://127\.0\.0\.1:\d+, as of `),
		regexp.MustCompile(`(?m)^\s+orders-\d\s+\S+Z\s+\S+\s+holding\s+`),
	} {
		if !want.MatchString(out) {
			t.Errorf("describe lacks %s:\n%s", want, out)
		}
	}
	out, _, code = kubectlLease(t, kubeconfig, "describe", "py-lock", "-n", k.ns)
	if code != 0 || !regexp.MustCompile(`(?m)^Kind:\s+ConfigMap$`).MatchString(out) || !regexp.MustCompile(`(?m)^History:\s+<unknown without an exporter`).MatchString(out) {
		t.Errorf("describe of the ConfigMap lock without an exporter (exit %d):\n%s", code, out)
	}
}

// Each mistake ends in one line naming the fix, exit code 1, never a stack trace.
func badInput(t *testing.T, k *kubectlLocks, kubeconfig string) {
	ctx := context.Background()
	// A user who may list Leases in the namespace, but not ConfigMaps.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "lease-reader", Namespace: k.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"list", "get"}}}}
	if _, err := env.Client.RbacV1().Roles(k.ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lease-reader", Namespace: k.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "lease-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "lease-reader"}}}
	if _, err := env.Client.RbacV1().RoleBindings(k.ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reader, err := env.CP.KubeconfigForUser("lease-reader")
	if err != nil {
		t.Fatal(err)
	}
	unscheduled := exporterServiceWithoutANode(t, k.ns)
	for _, tc := range []struct {
		name, kubeconfig string
		args             []string
		want             string
	}{
		{"unknown lock kind", kubeconfig, []string{"-n", k.ns, "--locks", "secrets"},
			`error: invalid --locks "secrets": unknown lock kind "secrets": use leases, configmaps or endpoints, comma-separated`},
		{"malformed NS/NAME", kubeconfig, []string{"describe", "a/b/c"}, `error: malformed lock "a/b/c": want NAMESPACE/NAME, or NAME with -n NAMESPACE`},
		{"no such lock", kubeconfig, []string{"describe", k.ns + "/nope"}, "error: no lock " + k.ns + "/nope: found no Lease, no ConfigMap, no Endpoints"},
		{"no permission to list ConfigMaps", reader, []string{"-n", k.ns, "--locks", "leases,configmaps"},
			`error: cannot list configmaps in namespace ` + k.ns + `: forbidden (configmaps is forbidden: User "lease-reader" cannot list resource "configmaps" in API group "" in the namespace "` + k.ns + `"); ask for "list" on configmaps (RBAC), or leave ConfigMap locks out: --locks leases`},
		{"unreachable exporter", kubeconfig, []string{"describe", k.ns + "/orders", "--exporter", "http://127.0.0.1:1"},
			"error: cannot read the history from the exporter at http://127.0.0.1:1: "},
		{"exporter Service missing", kubeconfig, []string{"describe", k.ns + "/orders", "--exporter-service", k.ns + "/no-exporter"},
			"error: cannot read the history from the exporter at service " + k.ns + "/no-exporter: "},
		{"unknown output", kubeconfig, []string{"-o", "table"}, `error: unable to match a printer suitable for the output format "table"`},
		// --exporter-service finds the Ready Pod behind the Service and asks the API server to
		// port-forward to it (never the service proxy); this Pod has no node to forward on.
		{"exporter Pod on no node", kubeconfig, []string{"describe", k.ns + "/orders", "--exporter-service", k.ns + "/" + unscheduled},
			"error: cannot read the history from the exporter at service " + k.ns + "/" + unscheduled + " (Pod " + unscheduled + "-0): port-forward: "},
	} {
		_, stderr, code := kubectlLease(t, tc.kubeconfig, tc.args...)
		last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
		if code != 1 || !strings.HasPrefix(last, tc.want) || strings.Contains(stderr, "goroutine ") {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and a last line starting %q", tc.name, code, stderr, tc.want)
		}
	}
	if out, _, code := kubectlLease(t, reader, "-n", k.ns); code != 0 || !strings.Contains(out, "orders") {
		t.Errorf("the Lease reader cannot list Leases (exit %d):\n%s", code, out)
	}
}

// -w in a real terminal (script(1) gives it a pseudo-terminal): the pool's leader is
// killed, and rows show its lease expire and the other candidate take over; the holder a
// minute behind, expired to a single read, is held to the watch, and skewed, with its skew
// measured.
func watchInTerminal(t *testing.T, k *kubectlLocks, kubeconfig string) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "script", "-q", "-f", "-e", "-c", "kubectl lease -w -n "+k.ns, "/dev/null")
	cmd.Env = append(pluginEnv(t, kubeconfig), "TERM=xterm")
	var out syncbuffer.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("===== kubectl lease -w =====\n%s", out.String())
		}
	})
	rows := func(name string) []string {
		var r []string
		for _, line := range strings.Split(strings.ReplaceAll(out.String(), "\r", ""), "\n") {
			if f := strings.Fields(line); len(f) > 5 && f[0] == name {
				r = append(r, line)
			}
		}
		return r
	}
	testsuite.Eventually(t, deadline, poll, "the watch shows the clock-behind holder held, skewed a minute behind", func() (bool, string) {
		for _, r := range rows("clock-behind") {
			if f := strings.Fields(r); f[4] == "on_time,skewed" && regexp.MustCompile(`^-(59|60|61)\.\d\ds$`).MatchString(f[8]) {
				return true, ""
			}
		}
		return false, strings.Join(rows("clock-behind"), "\n")
	})
	leader := k.pool.Leader()
	if leader == nil {
		t.Fatal("no leader in the pool")
	}
	k.pool.Remove(leader)
	// The killed leader's row goes lagging (no renewal for half its 4 s) and, if the
	// successor's next poll comes after the expiry, expired; then the successor's.
	testsuite.Eventually(t, deadline, poll, "the watch shows the killed leader's lease run late, then the successor", func() (bool, string) {
		late, successor := false, false
		for _, r := range rows("orders") {
			f := strings.Fields(r)
			late = late || (f[3] == leader.Identity && (f[4] == "lagging" || f[4] == "expired"))
			successor = successor || (late && f[3] != leader.Identity && f[4] == "on_time")
		}
		return successor, strings.Join(rows("orders"), "\n")
	})
	t.Logf("kubectl lease -w -n %s in a terminal, the leader %s killed:\n%s", k.ns, leader.Identity, strings.ReplaceAll(out.String(), "\r", ""))
}

// kubectlShowsCoordinatedElection checks kubectl lease on the kube-schedulers' coordinated
// election of TestCoordinatedLeaderElectionCandidates: the list's holder, standing, strategy
// and preferred holder are the exporter's, and describe lists every LeaseCandidate the
// exporter exports, the preferred one marked, with the history.
func kubectlShowsCoordinatedElection(t *testing.T, cp *controlplane.ControlPlane, exp *exporterproc.Exporter, ns, name string) {
	t.Helper()
	kubeconfig := cp.KubeconfigPath()
	testsuite.Eventually(t, deadline, poll, "kubectl lease and the exporter agree on the coordinated election", func() (bool, string) {
		c, err := scrapeCoordinated(exp, ns, name)
		if err != nil {
			return false, err.Error()
		}
		// The standing as the exporter's JSON API has it: the API server may have elected
		// older-scheduler, which answers pings but never renews, so its lease runs out.
		l, err := exporterList(exp, ns)
		if err != nil {
			return false, err.Error()
		}
		standing := ""
		for _, x := range l.Leases {
			if x.Name == name && x.Kind == "Lease" {
				standing = x.Standing
			}
		}
		out, stderr, code := kubectlLease(t, kubeconfig, "-n", ns, "-o", "json")
		var got struct {
			Leases []struct {
				Name, Holder, Strategy, Standing string
				PreferredHolder                  string `json:"preferred_holder"`
			} `json:"leases"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			return false, fmt.Sprintf("exit %d: %s%s", code, stderr, out)
		}
		for _, l := range got.Leases {
			if l.Name == name {
				return l.Holder == c.holder && l.Strategy == c.strategy && l.PreferredHolder == c.preferred && l.Standing == standing,
					fmt.Sprintf("plugin %+v, exporter holder %q strategy %q preferred %q standing %q", l, c.holder, c.strategy, c.preferred, standing)
			}
		}
		return false, "no " + name + " in " + out
	})
	c, err := scrapeCoordinated(exp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := kubectlLease(t, kubeconfig, "describe", ns+"/"+name, "--exporter", exp.URL())
	if code != 0 {
		t.Fatalf("describe: exit %d: %s", code, stderr)
	}
	for cand := range c.candidates {
		preferred := "false"
		if cand == c.preferred {
			preferred = "true"
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(cand) + `\s+1\.\S+\s+1\.\S+\s+OldestEmulationVersion\s+\S+\s+(true|false)\s+` + preferred + `$`).MatchString(out) {
			t.Errorf("describe does not list candidate %s (preferred %s):\n%s", cand, preferred, out)
		}
	}
	if !strings.Contains(out, "History (from "+exp.URL()) {
		t.Errorf("describe has no history from the exporter:\n%s", out)
	}
	t.Logf("kubectl lease describe %s/%s:\n%s", ns, name, out)
}

// The list is a streaming list, as the exporter's informer reads: the audit log shows the
// plugin's watch with sendInitialEvents answered 200 and no LIST of Leases.
func listIsStreamed(t *testing.T, k *kubectlLocks) {
	const user = "kubectl-streamer"
	kubeconfig, err := env.CP.KubeconfigForUser(user, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := kubectlLease(t, kubeconfig, "-n", k.ns); code != 0 || !strings.Contains(out, "orders") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	wantStreamedOnly(t, env.CP, user, "kubectl lease")
}

// kubectlLeasePagesWithoutStreaming: where the API server does not stream lists, the plugin
// pages through the list (its streaming list refused, then a LIST) and shows the same Lease.
func kubectlLeasePagesWithoutStreaming(t *testing.T, cp *controlplane.ControlPlane, ns, name string) {
	const user = "kubectl-fallback"
	kubeconfig, err := cp.KubeconfigForUser(user, "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := kubectlLease(t, kubeconfig, "-n", ns)
	if code != 0 || !regexp.MustCompile(`(?m)^`+name+`\s+Lease\s+leader-election\s+alpha\s+on_time\s`).MatchString(out) {
		t.Fatalf("kubectl lease without streaming lists (exit %d):\n%s%s", code, out, stderr)
	}
	wantLeaseReads(t, cp, user, func(r leaseReads) error {
		if r.refused == 0 || r.lists == 0 || r.streams > 0 {
			return fmt.Errorf("want a refused streaming list, then a LIST (%s)", r)
		}
		return nil
	})
}

// exporterServiceWithoutANode creates a Service whose EndpointSlice names a Ready Pod that
// no node runs (the test's control plane has no kubelet), and returns the Service's name.
func exporterServiceWithoutANode(t *testing.T, ns string) string {
	t.Helper()
	ctx, name := context.Background(), "unscheduled-exporter"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-0"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "exporter", Image: "lease-exporter"}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http-metrics", Port: 10047}}}}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http-metrics"), Port: ptr.To[int32](10047)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.9"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name}}}}
	// No controller manager makes the namespace's default ServiceAccount, which a Pod needs.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	if _, err := env.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}
