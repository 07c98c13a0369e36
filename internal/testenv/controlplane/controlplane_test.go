package controlplane

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestStartWithoutAssetsFails(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	_, err := Start(context.Background(), Options{})
	if err == nil || !strings.Contains(err.Error(), "hack/kube-binaries/build.sh") {
		t.Fatalf("Start without assets: got %v, want an error pointing at hack/kube-binaries/build.sh", err)
	}
}

// TestControlPlane needs KUBEBUILDER_ASSETS and fails without it: see
// hack/kube-binaries/README.md.
func TestControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp := StartForTest(t, Options{AuditPolicy: AuditLeaseReads})
	client := kubernetes.NewForConfigOrDie(cp.Config())
	if v := cp.EtcdVersion(); !strings.HasPrefix(v, "3.6.") {
		t.Errorf("etcd %s, want the 3.6 that Kubernetes 1.34 to 1.36 are released with", v)
	}
	leases := client.CoordinationV1().Leases(metav1.NamespaceDefault)

	holder := "test-holder"
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
	if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create lease: %v", err)
	}

	// The kubeconfig file must work for an out-of-process client too.
	fileCfg, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath())
	if err != nil {
		t.Fatalf("load admin kubeconfig: %v", err)
	}
	if _, err := kubernetes.NewForConfigOrDie(fileCfg).CoordinationV1().Leases("default").Get(ctx, "probe", metav1.GetOptions{}); err != nil {
		t.Fatalf("get lease via kubeconfig: %v", err)
	}

	// RBAC is on: a plain user may not read Leases.
	userCfg, err := cp.ConfigForUser("alice")
	if err != nil {
		t.Fatalf("user config: %v", err)
	}
	_, err = kubernetes.NewForConfigOrDie(userCfg).CoordinationV1().Leases("default").Get(ctx, "probe", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("get lease as alice: got %v, want Forbidden", err)
	}

	testTokenKubeconfig(ctx, t, cp, client)
	testStreamingList(ctx, t, cp)

	// API outage: the same client fails, then recovers on the same address.
	if err := cp.StopAPIServer(); err != nil {
		t.Fatalf("stop apiserver: %v", err)
	}
	if _, err := leases.Get(ctx, "probe", metav1.GetOptions{}); err == nil {
		t.Fatal("get lease succeeded while kube-apiserver was stopped")
	}
	if err := cp.StartAPIServer(); err != nil {
		t.Fatalf("restart apiserver: %v", err)
	}
	got, err := leases.Get(ctx, "probe", metav1.GetOptions{})
	if err != nil || *got.Spec.HolderIdentity != holder {
		t.Fatalf("get lease after apiserver restart: %v, %+v", err, got)
	}

	if err := cp.RestartEtcd(); err != nil {
		t.Fatalf("restart etcd: %v", err)
	}
	waitFor(ctx, t, "lease readable after etcd restart", func() error {
		_, err := leases.Get(ctx, "probe", metav1.GetOptions{})
		return err
	})

	testLeaderElection(ctx, t, cp, client)

	// Two controller-managers side by side must both come up.
	for range 2 {
		if _, err := cp.StartComponent(ctx, KubeControllerManager, fastElection()...); err != nil {
			t.Fatalf("start kube-controller-manager: %v", err)
		}
	}
	waitFor(ctx, t, "kube-controller-manager lease", func() error {
		_, err := leaseHolder(ctx, client, "kube-controller-manager")
		return err
	})

	testStopCleansUp(t, cp)
}

// testTokenKubeconfig checks that a ServiceAccount token minted by the
// TokenRequest API authenticates through KubeconfigForToken.
func testTokenKubeconfig(ctx context.Context, t *testing.T, cp *ControlPlane, client kubernetes.Interface) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}
	if _, err := client.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service account: %v", err)
	}
	tr, err := client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "reader", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("request token: %v", err)
	}
	path, err := cp.KubeconfigForToken(tr.Status.Token)
	if err != nil {
		t.Fatalf("token kubeconfig: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load token kubeconfig: %v", err)
	}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().
		Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("self subject review with token: %v", err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:default:reader"; got != want {
		t.Fatalf("token authenticates as %q, want %q", got, want)
	}
}

// testLeaderElection runs two schedulers: exactly one may hold the Lease,
// and killing it hands the Lease to the other.
func testLeaderElection(ctx context.Context, t *testing.T, cp *ControlPlane, client kubernetes.Interface) {
	s1, err := cp.StartComponent(ctx, KubeScheduler, fastElection()...)
	if err != nil {
		t.Fatalf("start scheduler 1: %v", err)
	}
	s2, err := cp.StartComponent(ctx, KubeScheduler, fastElection()...)
	if err != nil {
		t.Fatalf("start scheduler 2: %v", err)
	}
	if s1.Port() == s2.Port() {
		t.Fatalf("schedulers share port %d", s1.Port())
	}
	hostname, _ := os.Hostname()
	var first string
	waitFor(ctx, t, "one scheduler leader", func() error {
		first, err = leaseHolder(ctx, client, "kube-scheduler")
		return err
	})
	if !strings.HasPrefix(first, hostname+"_") {
		t.Fatalf("holder %q is not <hostname>_<uuid>", first)
	}
	// Give a second (wrong) acquisition time to show up before counting.
	time.Sleep(2 * time.Second)
	leader, follower := s1, s2
	if !hasAcquired(s1) {
		leader, follower = s2, s1
	}
	if !hasAcquired(leader) || hasAcquired(follower) {
		t.Fatalf("want exactly one scheduler to acquire the lease; s1=%v s2=%v", hasAcquired(s1), hasAcquired(s2))
	}

	if err := leader.Kill(); err != nil {
		t.Fatalf("kill leader: %v", err)
	}
	waitFor(ctx, t, "follower takes over", func() error {
		h, err := leaseHolder(ctx, client, "kube-scheduler")
		if err != nil {
			return err
		}
		if h == first || !hasAcquired(follower) {
			return fmt.Errorf("holder still %q", h)
		}
		return nil
	})
}

// testStopCleansUp checks that Stop leaves no child process, no listening
// port and no directory behind.
func testStopCleansUp(t *testing.T, cp *ControlPlane) {
	ports := cp.Ports()
	var pids []int
	for _, p := range cp.Processes() {
		pids = append(pids, p.PID())
	}
	if err := cp.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if kids := childPIDs(t); len(kids) > 0 {
		t.Fatalf("child processes left after Stop: %v", kids)
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("process %d still exists after Stop", pid)
		}
	}
	for _, port := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Errorf("port %d still in use after Stop: %v", port, err)
			continue
		}
		_ = l.Close()
	}
	if _, err := os.Stat(cp.Dir()); !os.IsNotExist(err) {
		t.Errorf("dir %s not removed: %v", cp.Dir(), err)
	}
}

// An etcd older than 3.5 (Debian bookworm ships 3.4) cannot serve streaming lists, so the
// harness refuses it instead of silently testing a path real clusters do not take.
func TestOldEtcdRefused(t *testing.T) {
	for _, tc := range []struct{ out, wantErr string }{
		{"etcd Version: 3.4.23\nGit SHA: Not provided\n", "is etcd 3.4.23"},
		{"something else\n", "no \"etcd Version: 3.x.y\""},
		{"etcd Version: 3.6.8\nGit SHA: Not provided\n", ""},
	} {
		dir := t.TempDir()
		script := "#!/bin/sh\nprintf '" + strings.ReplaceAll(tc.out, "\n", `\n`) + "'\n"
		if err := os.WriteFile(dir+"/etcd", []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		v, err := etcdVersion(dir + "/etcd")
		switch {
		case tc.wantErr == "" && (err != nil || v != "3.6.8"):
			t.Errorf("etcd printing %q: got %q, %v; want 3.6.8", tc.out, v, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("etcd printing %q: got %q, %v; want an error containing %q", tc.out, v, err, tc.wantErr)
		}
	}
}
