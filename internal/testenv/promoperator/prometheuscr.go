package promoperator

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

var prometheusGVR = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheuses"}

// prometheusObject is the Prometheus object kube-prometheus-stack's chart renders with its
// default values for a release named release (templates/prometheus/prometheus.yaml): every
// selector is `release: <release>` (the *SelectorNilUsesHelmValues defaults), every namespace
// selector {} (all namespaces), the scrape and evaluation intervals unset (the operator's 30s),
// and alerting to the release's Alertmanager Service when there is one. version is the
// Prometheus that runs the configuration (the operator leaves out what older versions do not
// know); kube-prometheus-stack sets it to its image tag.
func prometheusObject(o Options, version string) *unstructured.Unstructured {
	sel := map[string]any{"matchLabels": map[string]any{"release": o.Release}}
	spec := map[string]any{
		"version":                         version,
		"replicas":                        int64(1),
		"serviceAccountName":              o.Release + "-prometheus",
		"serviceMonitorSelector":          sel,
		"serviceMonitorNamespaceSelector": map[string]any{},
		"podMonitorSelector":              sel,
		"podMonitorNamespaceSelector":     map[string]any{},
		"probeSelector":                   sel,
		"probeNamespaceSelector":          map[string]any{},
		"ruleSelector":                    sel,
		"ruleNamespaceSelector":           map[string]any{},
		"alerting":                        map[string]any{"alertmanagers": []any{}},
	}
	if o.AlertmanagerURL != "" {
		spec["alerting"] = map[string]any{"alertmanagers": []any{map[string]any{
			"namespace": o.Namespace, "name": o.Release + "-alertmanager", "port": "http-web", "apiVersion": "v2",
		}}}
	}
	if o.EvaluationInterval != "" {
		spec["evaluationInterval"] = o.EvaluationInterval
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "Prometheus",
		"metadata": map[string]any{
			"name":      o.Release + "-prometheus",
			"namespace": o.Namespace,
			"labels":    map[string]any{"app": "kube-prometheus-stack-prometheus", "release": o.Release},
		},
		"spec": spec,
	}}
}

func createPrometheus(ctx context.Context, dyn dynamic.Interface, o Options, version string) error {
	_, err := dyn.Resource(prometheusGVR).Namespace(o.Namespace).Create(ctx, prometheusObject(o, version), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create Prometheus %s/%s-prometheus: %w", o.Namespace, o.Release, err)
	}
	return nil
}

// prometheusVersion is the version the Prometheus binary bin reports, e.g. "v3.5.0".
func prometheusVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w (build it with %s)\n%s", bin, err, buildScript, out)
	}
	m := regexp.MustCompile(`version (\d+\.\d+\.\d+)`).FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no version in `prometheus --version`: %s", out)
	}
	return "v" + string(m[1]), nil
}

// prometheusClusterRole is what kube-prometheus-stack grants its Prometheus
// (templates/prometheus/clusterrole.yaml): read what service discovery lists, and the
// nodes' metrics.
var prometheusClusterRole = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes", "nodes/metrics", "services", "endpoints", "pods"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch"}},
	{NonResourceURLs: []string{"/metrics", "/metrics/cadvisor"}, Verbs: []string{"get"}},
}

// prometheusToken creates the ServiceAccount the Prometheus object names, binds it to
// prometheusClusterRole, and returns a token for it: what the Prometheus Pod would mount, so
// service discovery runs with exactly the rights a kube-prometheus-stack install has.
func prometheusToken(ctx context.Context, kc kubernetes.Interface, o Options) (string, error) {
	name := o.Release + "-prometheus"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace}}
	if _, err := kc.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: prometheusClusterRole}
	if _, err := kc.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: o.Namespace}},
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	// Longer than any test; a Pod's token would be refreshed by the kubelet instead.
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](6 * 3600)}}
	tr, err := kc.CoreV1().ServiceAccounts(o.Namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for ServiceAccount %s/%s: %w", o.Namespace, name, err)
	}
	return tr.Status.Token, nil
}
