package reliability_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
)

// missingPermissionHint is the part of the exporter's forbidden log line that names what to grant.
const missingPermissionHint = "list and watch verbs on leases.coordination.k8s.io"

// TestRBACMissingAtStart runs the exporter as an identity without RBAC, then grants it.
func TestRBACMissingAtStart(t *testing.T) {
	ns := newNamespace(t, "rbac-missing")
	createLease(t, ns, "l1", "pod-1", 3600)
	const user = "lease-exporter-rbac-missing"
	kubeconfig, err := env.CP.KubeconfigForUser(user)
	if err != nil {
		t.Fatal(err)
	}
	exp := env.StartExporter(t, env.Bin, "--kubeconfig="+kubeconfig, "--namespaces="+ns, "--log.format=json")

	// At least 30 s of retries: alive, serving metrics, not ready, quiet.
	for start := time.Now(); time.Since(start) < 32*time.Second; time.Sleep(2 * time.Second) {
		if code, body := httpGet(t, exp.URL()+"/readyz"); code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz = %d %q without RBAC, want 503", code, body)
		}
		s := scrape(t, exp)
		if gauge(s, "lease_exporter_cache_synced") != 0 || gauge(s, "lease_exporter_watch_up") != 0 || len(s.Series("lease_info", nil)) != 0 {
			t.Fatalf("without RBAC: %s, %d lease_info series", health(s), len(s.Series("lease_info", nil)))
		}
	}
	s := scrape(t, exp)
	retries := s.Series("lease_exporter_watch_errors_total", map[string]string{"reason": "forbidden"})
	if len(retries) != 1 || retries[0].Value < 2 {
		t.Errorf("forbidden errors counted: %v, want several retries", retries)
	}
	logs := exp.Logs()
	errs := logLines(logs, "ERROR", "")
	if len(errs) != 1 || !strings.Contains(errs[0], missingPermissionHint) || !strings.Contains(errs[0], `cannot list resource \"leases\"`) && !strings.Contains(errs[0], `cannot watch resource \"leases\"`) {
		t.Errorf("want exactly one error line naming the missing permission, got %d:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	if warns := logLines(logs, "WARN", ""); len(warns) != 0 {
		t.Errorf("retries logged warnings:\n%s", strings.Join(warns, "\n"))
	}

	// Granting the permission makes the running process ready by itself.
	granted := time.Now()
	grantLeaseReader(t, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user})
	if err := exp.WaitReady(context.Background(), 2*time.Minute); err != nil {
		t.Fatalf("not ready after the grant: %v", err)
	}
	t.Logf("ready %.1fs after the ClusterRoleBinding was created", time.Since(granted).Seconds())
	waitFor(t, exp, "lease l1 exported after the grant", func(s *exporterproc.Scrape) bool {
		return leaseValue(s, "lease_held", ns, "l1") == 1 && gauge(s, "lease_exporter_watch_up") == 1
	})
	checkRunLogs(t, exp, 1)
}

// TestRBACRevoked deletes the exporter's ClusterRoleBinding while it runs.
func TestRBACRevoked(t *testing.T) {
	ns := newNamespace(t, "rbac-revoked")
	createLease(t, ns, "l1", "pod-1", 3600)
	const user = "lease-exporter-rbac-revoked"
	binding := grantLeaseReader(t, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user})
	kubeconfig, err := env.CP.KubeconfigForUser(user)
	if err != nil {
		t.Fatal(err)
	}
	exp := env.StartExporter(t, env.Bin, "--kubeconfig="+kubeconfig, "--namespaces="+ns, "--log.format=json")
	if err := exp.WaitReady(context.Background(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	waitFor(t, exp, "watch up", func(s *exporterproc.Scrape) bool { return gauge(s, "lease_exporter_watch_up") == 1 })

	if err := env.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Kubernetes authorizes a watch once, when it starts. The open watch goes on delivering
	// events, so the exporter's view is still current and it rightly says so.
	setHolder(t, ns, "l1", "pod-2")
	waitFor(t, exp, "a change made after the revocation", func(s *exporterproc.Scrape) bool {
		return len(s.Series("lease_info", map[string]string{"namespace": ns, "holder": "pod-2"})) == 1
	})
	if s := scrape(t, exp); gauge(s, "lease_exporter_watch_up") != 1 {
		t.Errorf("watch reported down although it still delivers events: %s", health(s))
	}
	// The watch ends when its timeout (5-10 min, chosen by client-go) runs out or the API
	// server closes it; a restart does the latter now. The re-list is then forbidden.
	env.StopAPIServer(t)
	env.StartAPIServer(t)
	waitFor(t, exp, "watch down with forbidden errors", func(s *exporterproc.Scrape) bool {
		forbidden := s.Series("lease_exporter_watch_errors_total", map[string]string{"reason": "forbidden"})
		return gauge(s, "lease_exporter_watch_up") == 0 && len(forbidden) == 1 && forbidden[0].Value > 0
	})
	before := scrape(t, exp)
	time.Sleep(5 * time.Second)
	after := scrape(t, exp)
	if grew := gauge(after, "lease_exporter_watch_stale_seconds") - gauge(before, "lease_exporter_watch_stale_seconds"); grew < 4 {
		t.Errorf("watch_stale_seconds grew by %.1f in 5 s after revocation", grew)
	}
	if v := leaseValue(after, "lease_held", ns, "l1"); v != 1 {
		t.Errorf("lease_held = %v after revocation: a stale view turned into a false 'no holder'", v)
	}
	// A view stale for longer than informer.ReadyStaleAfter is not ready, and /readyz says why
	// (the metrics above still report it, and Prometheus scrapes not-ready endpoints).
	waitReadyz(t, exp, http.StatusServiceUnavailable, "forbidden")
	if errs := logLines(exp.Logs(), "ERROR", missingPermissionHint); len(errs) != 1 {
		t.Errorf("want one error line naming the missing permission after revocation, got %d:\n%s", len(errs), testsuite.Tail(exp.Logs(), 20))
	}
	select {
	case <-exp.Done():
		t.Fatalf("exporter exited (code %d) after RBAC was revoked", exp.ExitCode())
	default:
	}
}

// waitReadyz waits up to a minute for /readyz to answer code with a body containing want.
func waitReadyz(t *testing.T, exp *exporterproc.Exporter, code int, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got, body := httpGet(t, exp.URL()+"/readyz")
		if got == code && strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q after a minute, want %d containing %q", got, body, code, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// grantLeaseReader creates a ClusterRole with exactly the exporter's verbs and binds it to
// subject; it returns the binding's name and deletes both when the test ends.
func grantLeaseReader(t *testing.T, subject rbacv1.Subject) string {
	t.Helper()
	ctx := context.Background()
	name := "lease-reader-" + strings.ToLower(strings.ReplaceAll(subject.Name, ":", "-"))
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"list", "watch"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	rbac := env.Client.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRole: %v", err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRoleBinding: %v", err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return name
}

// setHolder changes a Lease's holder through the API.
func setHolder(t *testing.T, namespace, name, holder string) {
	t.Helper()
	leases := env.Client.CoordinationV1().Leases(namespace)
	l, err := leases.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.HolderIdentity = &holder
	if _, err := leases.Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// httpGet returns the status code and body of a plain GET.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
