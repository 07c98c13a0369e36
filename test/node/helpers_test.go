//go:build release

package node_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lease-exporter/lease-exporter/internal/testenv/node"
)

const electorImage = "localhost/lease-exporter-test/elector:v1"

func buildElectorImage(t *testing.T) string {
	t.Helper()
	path, err := node.BuildGoImage(t.TempDir(), "github.com/lease-exporter/lease-exporter/internal/testenv/node/elector", electorImage)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func dumpLogs(t *testing.T, n *node.Node) {
	t.Helper()
	for _, p := range n.Processes() {
		logs := p.Logs()
		if len(logs) > 4000 {
			logs = logs[len(logs)-4000:]
		}
		t.Logf("===== %s (%s) =====\n%s", p.Name(), p.LogPath(), logs)
	}
}

func createNamespace(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	_, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// deployElector runs the client-go elector image as a Deployment with a ServiceAccount that
// may only manage Leases in its namespace, as an operator's chart would grant.
func deployElector(t *testing.T, c kubernetes.Interface, ns, lease string, replicas int32) {
	t.Helper()
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "elector"}}, metav1.CreateOptions{}))
	must(c.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "elector"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "create", "update"}}}}, metav1.CreateOptions{}))
	must(c.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "elector"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "elector"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "elector", Namespace: ns}}}, metav1.CreateOptions{}))
	labels := map[string]string{"app": "elector-" + lease}
	must(c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "elector-" + lease},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName:            "elector",
					TerminationGracePeriodSeconds: ptr.To[int64](2),
					Containers: []corev1.Container{{
						Name: "elector", Image: electorImage, ImagePullPolicy: corev1.PullNever,
						Args: []string{"--namespace=" + ns, "--lease=" + lease},
					}},
				},
			},
		},
	}, metav1.CreateOptions{}))
}

func waitLease(t *testing.T, c kubernetes.Interface, ns, name string, timeout time.Duration, ok func(*coordinationv1.Lease) bool) *coordinationv1.Lease {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l, err := c.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && ok(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease %s/%s: condition not met after %s (last: %v, err %v)", ns, name, timeout, l, err)
		}
		time.Sleep(time.Second)
	}
}
