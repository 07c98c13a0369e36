package election_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/election"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/lock/leaderrecord"
)

const pyDuration = 15 * time.Second // the launcher's default lease duration

// startPython starts a Python elector that the test kills at the end, and prints its log if
// the test failed.
func startPython(t *testing.T, o election.PythonOptions) *election.PythonElector {
	t.Helper()
	o.Kubeconfig, o.Dir = env.cp.KubeconfigPath(), t.TempDir()
	p, err := election.StartPython(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("===== python elector %s log =====\n%s", o.Identity, testsuite.Tail(p.Log(), 40))
		}
	})
	return p
}

func lockKind(l election.PythonLock) election.LockKind {
	if l == election.PythonLease {
		return election.LockLease
	}
	return election.LockConfigMap
}

// Two Python electors elect one leader; after kill -9 of the leader the other takes over
// once it has seen the record unchanged for a lease duration, not before and not much after.
func TestPythonFailover(t *testing.T) {
	t.Parallel()
	for _, lock := range []election.PythonLock{election.PythonConfigMap, election.PythonLease} {
		t.Run(string(lock), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, "py-failover-"+string(lock))
			w := watchLock(t, lockKind(lock), ns, "lock")
			ids := []string{"py-a", "py-b"}
			electors := map[string]*election.PythonElector{}
			for _, id := range ids {
				electors[id] = startPython(t, election.PythonOptions{Namespace: ns, Name: "lock", Identity: id, Lock: lock})
			}
			first := w.waitFor(2*time.Minute, "a holder", func(r record) bool { return r.holder != "" })
			leader, follower := electors[first.holder], electors[ids[0]]
			if leader == follower {
				follower = electors[ids[1]]
			}
			waitUntil(t, time.Minute, "the holder says it leads", leader.Leading)
			// A few renewals, during which the follower must not take over.
			w.waitFor(time.Minute, "a renewal", func(r record) bool { return r.renew.After(first.renew) })
			if follower.Leading() {
				t.Fatalf("both %s and %s lead", leader.Identity, follower.Identity)
			}
			checkRecord(t, first, lock)

			killed := time.Now()
			leader.Kill()
			next := w.waitFor(pyDuration+time.Minute, "the follower holds", func(r record) bool { return r.holder == follower.Identity })
			took := next.seen.Sub(killed)
			t.Logf("%s took over %v after kill -9 of %s", follower.Identity, took.Round(time.Millisecond), leader.Identity)
			// The last renewal was at most a retry period (2 s) plus a request before the kill.
			if took < pyDuration-5*time.Second || took > pyDuration+15*time.Second {
				t.Errorf("takeover %v after the kill, want about the lease duration %v", took, pyDuration)
			}
			waitUntil(t, time.Minute, "the follower says it leads", follower.Leading)
			if !strings.Contains(follower.Log(), follower.Identity+" successfully acquired lease") {
				t.Errorf("follower log lacks the library's acquire line")
			}
			checkRecord(t, next, lock)
			if lock == election.PythonConfigMap {
				writeCapture(t, "python-configmaplock.txt", "python3-kubernetes 22.6 (Debian) kubernetes.leaderelection ConfigMapLock: two electors, the second taking over after kill -9 of the first", w.all())
			}
		})
	}
}

// checkRecord checks what the Python elector writes: duration 15, a renewTime near now on
// the real clock, and (annotation) no leaderTransitions.
func checkRecord(t *testing.T, r record, lock election.PythonLock) {
	t.Helper()
	if d := r.renew.Sub(r.seen); d > 2*time.Second || d < -10*time.Second {
		t.Errorf("renewTime %v is %v from when the watch delivered it", r.renew, d)
	}
	if lock == election.PythonConfigMap {
		p := r.parsed
		if !p.HasDuration || p.DurationSeconds != 15 || p.HasTransitions || !p.HasAcquireTime || p.AcquireTime > p.RenewTime {
			t.Errorf("annotation %s parsed as %+v", r.raw, p)
		}
		if !strings.Contains(r.raw, `"leaseDurationSeconds": "15"`) {
			t.Errorf("annotation %s: the Python client writes the duration as a string", r.raw)
		}
	}
}

// Under faketime the times the elector writes are shifted by the requested offset: judged
// against when the watch delivered each renewal, within 2 s.
func TestPythonFaketime(t *testing.T) {
	t.Parallel()
	for _, lock := range []election.PythonLock{election.PythonConfigMap, election.PythonLease} {
		for _, offset := range []string{"-120s", "+300s"} {
			t.Run(string(lock)+offset, func(t *testing.T) {
				t.Parallel()
				want, err := time.ParseDuration(offset)
				if err != nil {
					t.Fatal(err)
				}
				ns := namespace(t, "py-faketime-"+string(lock)+map[bool]string{true: "-behind", false: "-ahead"}[want < 0])
				w := watchLock(t, lockKind(lock), ns, "lock")
				start := time.Now()
				p := startPython(t, election.PythonOptions{Namespace: ns, Name: "lock", Identity: "py-skewed", Lock: lock, Faketime: offset})
				w.waitFor(2*time.Minute, "three renewals", func(record) bool { return len(w.skews(start)) >= 3 })
				waitUntil(t, time.Minute, "the elector says it leads", p.Leading)
				checkSkew(t, w, w.skews(start), want)
			})
		}
	}
}

// libfaketime shifts what the Python elector's clock readings come from: time.time() and
// datetime.now() (local) and utcnow(), which the records are written from.
func TestFaketimeShiftsPythonClock(t *testing.T) {
	t.Parallel()
	script := "import time, datetime; n = datetime.datetime.now(); u = datetime.datetime.utcnow(); " +
		"print(time.time(), n.timestamp(), u.replace(tzinfo=datetime.timezone.utc).timestamp())"
	for _, offset := range []time.Duration{-120 * time.Second, 300 * time.Second} {
		arg := fmt.Sprintf("%+ds", int(offset.Seconds()))
		shift, err := election.FaketimeEnv(arg)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(election.PythonPath, "-c", script)
		cmd.Env = append(os.Environ(), shift...)
		before := time.Now()
		out, err := cmd.Output()
		after := time.Now()
		if err != nil {
			t.Fatalf("FAKETIME=%s: %v", arg, err)
		}
		for i, f := range strings.Fields(string(out)) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			got := time.UnixMicro(int64(v * 1e6))
			if got.Before(before.Add(offset-time.Second)) || got.After(after.Add(offset+time.Second)) {
				t.Errorf("FAKETIME=%s: clock %d reads %v, real time %v..%v", arg, i, got, before, after)
			}
		}
	}
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testsuite.Eventually(t, timeout, 200*time.Millisecond, what, func() (bool, string) { return cond(), "not yet" })
}

// The Python client writes its times from datetime.fromtimestamp(time.time()): naive local
// time. Its ConfigMapLock record therefore reads as UTC shifted by the elector's zone offset
// (a skew of +2 h under TZ=Etc/GMT-2, which is UTC+2); the Lease lock converts to UTC.
func TestPythonLocalTimeZone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock election.PythonLock
		want time.Duration
	}{{election.PythonConfigMap, 2 * time.Hour}, {election.PythonLease, 0}} {
		t.Run(string(tc.lock), func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, "py-tz-"+string(tc.lock))
			w := watchLock(t, lockKind(tc.lock), ns, "lock")
			start := time.Now()
			startPython(t, election.PythonOptions{Namespace: ns, Name: "lock", Identity: "py-tz", Lock: tc.lock, Env: []string{"TZ=Etc/GMT-2"}})
			w.waitFor(2*time.Minute, "two renewals", func(record) bool { return len(w.skews(start)) >= 2 })
			checkSkew(t, w, w.skews(start), tc.want)
		})
	}
}

// What the Python ConfigMapLock does to a ConfigMap that exists without a record: it never
// writes the empty annotation value it starts from in memory (get() replaces the annotations
// with {leader: ""}, update() then sets the record), but that replacement drops every other
// annotation of the ConfigMap. And it never releases: after SIGTERM the record stays as it
// was until another elector takes it over.
func TestPythonConfigMapLockOnExistingConfigMap(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "py-existing")
	w := watchLock(t, election.LockConfigMap, ns, "lock")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lock", Annotations: map[string]string{"team": "a"}}, Data: map[string]string{"k": "v"}}
	if _, err := env.client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := startPython(t, election.PythonOptions{Namespace: ns, Name: "lock", Identity: "py-1"})
	held := w.waitFor(2*time.Minute, "py-1 holds", func(r record) bool { return r.holder == "py-1" })
	waitUntil(t, time.Minute, "the elector says it leads", p.Leading)
	for _, r := range w.all() {
		if r.present && r.raw == "" {
			t.Errorf("the empty annotation value was written: %s", w.dump())
		}
	}
	if len(held.others) != 0 {
		t.Errorf("annotations besides the record survived: %v (python3-kubernetes fixed ConfigMapLock.get?)", held.others)
	}
	p.Stop() // returns once the process has exited: it cannot write any more
	// A renewal written just before the exit may still be on its way to the watch; let it
	// land before counting, so only writes after the exit (there must be none) show.
	time.Sleep(time.Second)
	stopped := len(w.all())
	time.Sleep(3 * time.Second)
	got, err := env.client.CoreV1().ConfigMaps(ns).Get(context.Background(), "lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := leaderrecord.Parse(got.Annotations[leaderrecord.Annotation]); r.Holder != "py-1" || len(w.all()) != stopped {
		t.Errorf("after SIGTERM the record changed: %s\n%s", got.Annotations[leaderrecord.Annotation], w.dump())
	}
}
