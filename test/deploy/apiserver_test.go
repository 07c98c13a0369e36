package deploy_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lease-exporter/lease-exporter/internal/testenv/exporterproc"
	"github.com/lease-exporter/lease-exporter/internal/testenv/testsuite"
	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// apiEnv is a real etcd + kube-apiserver (no scheduler or controllers: nothing runs the
// Deployments, the exporter runs here as a process with the Deployment's args and its
// ServiceAccount's token).
type apiEnv struct {
	suite  *testsuite.Suite
	client kubernetes.Interface
}

// kubectl runs kubectl as cluster admin and returns stdout and stderr.
func (e *apiEnv) kubectl(t *testing.T, args ...string) (string, string) {
	t.Helper()
	stdout, stderr, err := e.kubectlErr(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout, stderr
}

func (e *apiEnv) kubectlErr(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"--kubeconfig=" + e.suite.CP.KubeconfigPath()}, args...)
	return runCapture(ctx, tools.Kubectl(t), full...)
}

// TestAgainstAPIServer validates every rendering with the real kube-apiserver (server-side
// dry-run against the real OpenAPI schemas and the vendored prometheus-operator and Perses operator CRDs), checks
// Pod Security "restricted" admission, the effective RBAC rights of the ServiceAccount, and
// runs the release binary with that ServiceAccount's token until it exports lease_info.
func TestAgainstAPIServer(t *testing.T) {
	tools.Kubectl(t) // fail early and clearly without KUBEBUILDER_ASSETS
	tools.Helm(t)
	// The release build overlaps the control plane's start-up.
	suite := testsuite.StartForTest(t, testsuite.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	client := suite.Client
	e := &apiEnv{suite: suite, client: client}

	// The exporter's namespace enforces (and warns about) Pod Security "restricted".
	createNamespace(ctx, t, client, kustomizeNS, map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	})
	createNamespace(ctx, t, client, "observability", nil) // for the "other-namespace" example
	crds := filepath.Join(tools.RepoRoot(t), "test", "deploy", "testdata", "crds")
	e.kubectl(t, "apply", "--server-side", "-f", crds)
	// A CRD read before the API server has set any condition makes kubectl wait fail at once
	// ("conditions accessor error: <nil>") instead of waiting: retry until it can wait.
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		stdout, stderr, err := e.kubectlErr(t, "wait", "--for=condition=Established", "--timeout=60s",
			"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com", "crd/persesdashboards.perses.dev")
		if err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("kubectl wait for the CRDs: %v\n%s\n%s", err, stdout, stderr)
		}
	}

	// Leases for the exporter to find: one in a namespace the namespaced variant watches,
	// one in a namespace it does not.
	createLease(ctx, t, client, "kube-system", "deploy-test-system")
	createLease(ctx, t, client, "default", "deploy-test-default")

	t.Run("server-side dry-run of every rendering", func(t *testing.T) {
		renderings := map[string][]byte{}
		root := tools.RepoRoot(t)
		dirs := []string{kustomizeDir + "/base"}
		for _, o := range overlays(t) {
			dirs = append(dirs, kustomizeDir+"/overlays/"+o)
		}
		for name := range docExamples {
			dirs = append(dirs, "test/deploy/testdata/kustomize/"+name)
		}
		for _, d := range dirs {
			renderings["kustomize "+d] = run(t, root, nil, tools.Kubectl(t), "kustomize", filepath.Join(root, d))
		}
		for _, v := range append(variants, variant{overlay: "web-config", helmArgs: []string{
			"--set", "webConfig.secretName=web,webConfig.tls=true,serviceMonitor.enabled=true,serviceMonitor.tlsConfig.insecureSkipVerify=true",
		}}) {
			out, err := renderHelmErr(t, v.helmArgs...)
			if err != nil {
				t.Fatal(err)
			}
			renderings["helm "+v.overlay] = out
		}
		for _, name := range keys(renderings) {
			f := filepath.Join(t.TempDir(), "manifests.yaml")
			if err := os.WriteFile(f, renderings[name], 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := e.kubectlErr(t, "apply", "--dry-run=server", "--server-side", "--field-manager=deploy-test", "-f", f)
			if err != nil {
				t.Errorf("%s: kubectl apply --dry-run=server: %v\n%s\n%s", name, err, stdout, stderr)
				continue
			}
			if strings.Contains(stderr, "PodSecurity") {
				t.Errorf("%s: Pod Security warnings:\n%s", name, stderr)
			}
			if n := strings.Count(stdout, "(server dry run)"); n != len(decodeObjects(t, renderings[name])) {
				t.Errorf("%s: %d objects accepted, %d rendered:\n%s", name, n, len(decodeObjects(t, renderings[name])), stdout)
			}
		}
	})

	// Baseline: what any ServiceAccount may do without bindings (discovery, self reviews).
	baseline := func(t *testing.T, ns string) []string {
		return e.canI(t, "system:serviceaccount:"+ns+":no-bindings", ns)
	}

	t.Run("cluster-wide kustomize", func(t *testing.T) {
		root := tools.RepoRoot(t)
		manifests := run(t, root, nil, tools.Kubectl(t), "kustomize", filepath.Join(root, kustomizeDir, "overlays", "cluster-wide"))
		e.apply(t, manifests)
		objs := decodeObjects(t, manifests)
		dep := deploymentOf(t, objs)
		sa := "system:serviceaccount:" + kustomizeNS + ":lease-exporter"

		t.Run("restricted pod admitted", func(t *testing.T) {
			checkPodAdmission(ctx, t, client, dep)
		})
		t.Run("RBAC is list+watch on leases and leasecandidates only", func(t *testing.T) {
			for _, ns := range []string{kustomizeNS, "kube-system", "default"} {
				extra := subtract(e.canI(t, sa, ns), baseline(t, kustomizeNS))
				if want := []string{"leasecandidates.coordination.k8s.io [] [] [list watch]", "leases.coordination.k8s.io [] [] [list watch]"}; !slices.Equal(extra, want) {
					t.Errorf("in namespace %s the ServiceAccount may do, beyond the defaults:\n  %s\nwant:\n  %s", ns, strings.Join(extra, "\n  "), strings.Join(want, "\n  "))
				}
			}
		})
		t.Run("exporter with the ServiceAccount token exports lease_info", func(t *testing.T) {
			exp := e.runExporter(ctx, t, kustomizeNS, "lease-exporter", dep)
			waitLease(t, exp, "kube-system", "deploy-test-system", true)
			waitLease(t, exp, "default", "deploy-test-default", true)
		})
	})

	// After "cluster-wide kustomize" proved the default grants nothing on ConfigMaps and
	// Endpoints, the annotation-locks overlay (the same objects plus both components) adds
	// exactly list+watch on them, and an exporter with its flags and token exports such locks.
	t.Run("annotation-locks kustomize", func(t *testing.T) {
		root := tools.RepoRoot(t)
		manifests := run(t, root, nil, tools.Kubectl(t), "kustomize", filepath.Join(root, kustomizeDir, "overlays", "annotation-locks"))
		e.apply(t, manifests)
		dep := deploymentOf(t, decodeObjects(t, manifests))
		sa := "system:serviceaccount:" + kustomizeNS + ":lease-exporter"
		t.Run("RBAC adds list+watch on configmaps and endpoints", func(t *testing.T) {
			want := []string{"configmaps [] [] [list watch]", "endpoints [] [] [list watch]", "leasecandidates.coordination.k8s.io [] [] [list watch]", "leases.coordination.k8s.io [] [] [list watch]"}
			for _, ns := range []string{kustomizeNS, "kube-system", "default"} {
				if extra := subtract(e.canI(t, sa, ns), baseline(t, kustomizeNS)); !slices.Equal(extra, want) {
					t.Errorf("in namespace %s the ServiceAccount may do, beyond the defaults:\n  %s\nwant:\n  %s", ns, strings.Join(extra, "\n  "), strings.Join(want, "\n  "))
				}
			}
		})
		t.Run("exporter with the ServiceAccount token exports annotation locks", func(t *testing.T) {
			createAnnotationLocks(ctx, t, client, "default", "deploy-test-lock")
			exp := e.runExporter(ctx, t, kustomizeNS, "lease-exporter", dep)
			waitLease(t, exp, "kube-system", "deploy-test-system", true)
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				s, err := exp.Scrape()
				if err != nil {
					t.Fatal(err)
				}
				var missing []string
				for _, kind := range []string{"ConfigMap", "Endpoints"} {
					if len(s.Series("lease_info", map[string]string{"namespace": "default", "lease": "deploy-test-lock", "kind": kind, "holder": "deploy-test-holder"})) != 1 {
						missing = append(missing, kind)
					}
				}
				if len(missing) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no lease_info for the %v lock default/deploy-test-lock:\n%s", missing, grepLines(s.Text, "lease_info{"))
				}
			}
		})
	})

	// The events overlay grants what --events needs and nothing more, and an exporter with
	// its flags and token is elected writer, writes an Event for a change and rebuilds its
	// history from the Events without a single refusal.
	t.Run("events kustomize", func(t *testing.T) {
		root := tools.RepoRoot(t)
		manifests := run(t, root, nil, tools.Kubectl(t), "kustomize", filepath.Join(root, kustomizeDir, "overlays", "events"))
		e.apply(t, manifests)
		dep := deploymentOf(t, decodeObjects(t, manifests))
		sa := "system:serviceaccount:" + kustomizeNS + ":lease-exporter"
		t.Run("RBAC adds events and the writer's election Lease", func(t *testing.T) {
			for _, ns := range []string{kustomizeNS, "kube-system", "default"} {
				want := []string{"events.events.k8s.io [] [] [create patch list]", "leasecandidates.coordination.k8s.io [] [] [list watch]", "leases.coordination.k8s.io [] [] [list watch]"}
				if ns == kustomizeNS { // the writer's election, in its own namespace only
					want = []string{"events.events.k8s.io [] [] [create patch list]", "leasecandidates.coordination.k8s.io [] [] [list watch]",
						"leases.coordination.k8s.io [] [] [list watch create]", "leases.coordination.k8s.io [] [lease-exporter-events] [get update]"}
				}
				if extra := subtract(e.canI(t, sa, ns), baseline(t, kustomizeNS)); !slices.Equal(extra, want) {
					t.Errorf("in namespace %s the ServiceAccount may do, beyond the defaults:\n  %s\nwant:\n  %s", ns, strings.Join(extra, "\n  "), strings.Join(want, "\n  "))
				}
			}
		})
		t.Run("exporter with the ServiceAccount token writes Events", func(t *testing.T) {
			exp := e.runExporter(ctx, t, kustomizeNS, "lease-exporter", dep)
			waitLease(t, exp, "default", "deploy-test-default", true)
			for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				s, err := exp.Scrape()
				if err != nil {
					t.Fatal(err)
				}
				if w := s.Series("lease_exporter_events_writer", nil); len(w) == 1 && w[0].Value == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("never elected to write Events:\n%s", exp.Logs())
				}
			}
			l, err := client.CoordinationV1().Leases("default").Get(ctx, "deploy-test-default", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			holder, now := "deploy-test-successor", metav1.NewMicroTime(time.Now())
			l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime = &holder, &now, &now
			if _, err := client.CoordinationV1().Leases("default").Update(ctx, l, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				evs, err := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reportingController=lease-exporter"})
				if err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(evs.Items, func(ev eventsv1.Event) bool {
					return ev.Reason == "LeaderChanged" && ev.Regarding.Name == "deploy-test-default" && strings.Contains(ev.Note, `to "deploy-test-successor"`)
				}) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no LeaderChanged Event for default/deploy-test-default:\n%s", exp.Logs())
				}
			}
			if logs := exp.Logs(); strings.Contains(logs, "forbidden") || !strings.Contains(logs, "rebuilt history from Events") {
				t.Errorf("the exporter was refused something, or did not rebuild its history:\n%s", logs)
			}
		})
	})

	t.Run("namespaced helm install", func(t *testing.T) {
		const ns, release = "scoped", "scoped"
		createNamespace(ctx, t, client, ns, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		root := tools.RepoRoot(t)
		out := run(t, root, tools.HelmEnv(t), tools.Helm(t), "install", release, filepath.Join(root, chartDir),
			"--kubeconfig", suite.CP.KubeconfigPath(), "--namespace", ns,
			"--set-json", `watch.namespaces=["kube-system","kube-node-lease"]`)
		if !strings.Contains(string(out), "It watches the Leases of: kube-system, kube-node-lease") {
			t.Errorf("helm install NOTES do not describe the namespaced install:\n%s", out)
		}
		manifest := run(t, root, tools.HelmEnv(t), tools.Helm(t), "get", "manifest", release, "--kubeconfig", suite.CP.KubeconfigPath(), "--namespace", ns)
		objs := decodeObjects(t, manifest)
		dep := deploymentOf(t, objs)
		name := dep.get("spec", "template", "spec", "serviceAccountName").(string)
		sa := "system:serviceaccount:" + ns + ":" + name
		if n := len(ofKind(objs, "ClusterRole")) + len(ofKind(objs, "ClusterRoleBinding")); n != 0 {
			t.Errorf("namespaced install created %d cluster-scoped RBAC objects", n)
		}

		t.Run("restricted pod admitted", func(t *testing.T) {
			checkPodAdmission(ctx, t, client, dep)
		})
		t.Run("RBAC only in the watched namespaces", func(t *testing.T) {
			for ns2, want := range map[string][]string{
				"kube-system":     {"leasecandidates.coordination.k8s.io [] [] [list watch]", "leases.coordination.k8s.io [] [] [list watch]"},
				"kube-node-lease": {"leasecandidates.coordination.k8s.io [] [] [list watch]", "leases.coordination.k8s.io [] [] [list watch]"},
				"default":         nil,
				ns:                nil,
			} {
				extra := subtract(e.canI(t, sa, ns2), baseline(t, ns))
				if !slices.Equal(extra, want) {
					t.Errorf("in namespace %s the ServiceAccount may do, beyond the defaults: %v, want %v", ns2, extra, want)
				}
			}
		})
		t.Run("exporter with the ServiceAccount token exports the watched namespaces", func(t *testing.T) {
			exp := e.runExporter(ctx, t, ns, name, dep)
			waitLease(t, exp, "kube-system", "deploy-test-system", true)
			waitLease(t, exp, "default", "deploy-test-default", false)
		})
		// Upgraded with ConfigMap locks on, the same Roles grant list+watch on configmaps too,
		// still only in the watched namespaces.
		t.Run("upgrade with locks.configMaps grants configmaps in the watched namespaces only", func(t *testing.T) {
			run(t, root, tools.HelmEnv(t), tools.Helm(t), "upgrade", release, filepath.Join(root, chartDir),
				"--kubeconfig", suite.CP.KubeconfigPath(), "--namespace", ns,
				"--set-json", `watch.namespaces=["kube-system","kube-node-lease"]`, "--set", "locks.configMaps=true")
			withCM := []string{"configmaps [] [] [list watch]", "leasecandidates.coordination.k8s.io [] [] [list watch]", "leases.coordination.k8s.io [] [] [list watch]"}
			for ns2, want := range map[string][]string{"kube-system": withCM, "kube-node-lease": withCM, "default": nil, ns: nil} {
				if extra := subtract(e.canI(t, sa, ns2), baseline(t, ns)); !slices.Equal(extra, want) {
					t.Errorf("in namespace %s the ServiceAccount may do, beyond the defaults: %v, want %v", ns2, extra, want)
				}
			}
		})
	})
}

// apply creates the objects for real (server-side apply).
func (e *apiEnv) apply(t *testing.T, manifests []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(f, manifests, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr := e.kubectl(t, "apply", "--server-side", "--field-manager=deploy-test", "-f", f)
	if strings.Contains(stderr, "PodSecurity") {
		t.Errorf("Pod Security warnings:\n%s", stderr)
	}
}

// canI lists what user may do in ns, one normalised line per rule, sorted.
func (e *apiEnv) canI(t *testing.T, user, ns string) []string {
	t.Helper()
	out, _ := e.kubectl(t, "auth", "can-i", "--list", "--as="+user, "--namespace="+ns)
	var rules []string
	for i, line := range strings.Split(out, "\n") {
		if i == 0 || strings.TrimSpace(line) == "" { // header
			continue
		}
		rules = append(rules, strings.Join(strings.Fields(line), " "))
	}
	slices.Sort(rules)
	return rules
}

func subtract(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// checkPodAdmission creates (server-side dry run) a Pod with the Deployment's pod template in
// the Deployment's namespace, which enforces Pod Security "restricted", and makes sure the
// enforcement is real by showing that a weakened copy is rejected.
func checkPodAdmission(ctx context.Context, t *testing.T, client kubernetes.Interface, dep object) {
	t.Helper()
	raw, err := json.Marshal(dep.get("spec", "template"))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl corev1.PodTemplateSpec
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Name = dep.name() + "-admission-check"
	pod.Namespace = dep.namespace()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, dry); err != nil {
		t.Fatalf("the Deployment's pod is not admitted in a namespace enforcing Pod Security restricted: %v", err)
	}
	weak := pod.DeepCopy()
	escalate := true
	weak.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &escalate
	_, err = client.CoreV1().Pods(pod.Namespace).Create(ctx, weak, dry)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PodSecurity") {
		t.Errorf("a pod allowing privilege escalation was not rejected by Pod Security (err %v): the check above proves nothing", err)
	}
}

// runExporter starts the release binary with the Deployment's args (but a loopback port)
// and a kubeconfig holding a TokenRequest token of the ServiceAccount, and waits for /readyz.
func (e *apiEnv) runExporter(ctx context.Context, t *testing.T, ns, sa string, dep object) *exporterproc.Exporter {
	t.Helper()
	expiry := int64(3600)
	tok, err := e.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, sa, err)
	}
	kubeconfig, err := e.suite.CP.KubeconfigForToken(tok.Status.Token)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig=" + kubeconfig}
	for _, a := range argsOf(containerOf(t, dep)) {
		if !strings.HasPrefix(a, "--web.listen-address=") {
			// The kubelet expands $(POD_NAMESPACE) from the Pod's own namespace.
			args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", ns))
		}
	}
	exp := e.suite.StartExporter(t, e.suite.Bin, args...)
	if err := exp.WaitReady(ctx, 60*time.Second); err != nil {
		t.Fatalf("exporter with args %v not ready: %v", args, err)
	}
	return exp
}

// waitLease polls /metrics until lease_info for the lease appears (want) or, for a lease the
// exporter must not see, checks once the cache has synced that it is absent.
func waitLease(t *testing.T, exp *exporterproc.Exporter, ns, lease string, want bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := exp.Scrape()
		if err != nil {
			t.Fatal(err)
		}
		got := len(s.Series("lease_info", map[string]string{"namespace": ns, "lease": lease})) == 1
		if got == want {
			return
		}
		if !want || time.Now().After(deadline) {
			t.Fatalf("lease_info{namespace=%q,lease=%q} present=%v, want %v; lease_info series:\n%s", ns, lease, got, want, grepLines(s.Text, "lease_info{"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func createNamespace(ctx context.Context, t *testing.T, client kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

func createLease(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	holder, duration := "deploy-test-holder", int32(30)
	_, err := client.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			LeaseDurationSeconds: &duration,
			AcquireTime:          &now,
			RenewTime:            &now,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create lease %s/%s: %v", ns, name, err)
	}
}

// createAnnotationLocks creates a ConfigMap and an Endpoints lock named name, in client-go's
// record format.
func createAnnotationLocks(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
		"control-plane.alpha.kubernetes.io/leader": `{"holderIdentity":"deploy-test-holder","leaseDurationSeconds":30,"acquireTime":"` + now + `","renewTime":"` + now + `","leaderTransitions":0}`,
	}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap lock %s/%s: %v", ns, name, err)
	}
	if _, err := client.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Endpoints lock %s/%s: %v", ns, name, err)
	}
}

// runCapture runs a command and returns its stdout and stderr separately.
func runCapture(ctx context.Context, name string, args ...string) (string, string, error) {
	var stdout, stderr strings.Builder
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
