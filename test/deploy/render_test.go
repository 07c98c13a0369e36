package deploy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/lock"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// variant pairs a kustomize overlay with the Helm values that must render the same objects.
type variant struct {
	overlay  string
	helmArgs []string
}

var variants = []variant{
	{overlay: "cluster-wide"},
	{overlay: "namespaced", helmArgs: []string{"--set-json", `watch.namespaces=["kube-system","kube-node-lease"]`}},
	{overlay: "sharded", helmArgs: []string{"--set", "sharding.totalShards=2"}},
	{overlay: "annotation-locks", helmArgs: []string{"--set", "locks.configMaps=true,locks.endpoints=true"}},
	{overlay: "control-plane-locks", helmArgs: []string{"-f", "deploy/helm/lease-exporter/examples/control-plane-locks.yaml"}},
	{overlay: "prometheus-operator", helmArgs: []string{"--set", "serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboards.enabled=true"}},
	{overlay: "perses", helmArgs: []string{"--set", "dashboards.perses.enabled=true"}},
	{overlay: "events", helmArgs: []string{"--set", "events.enabled=true"}},
}

// TestEveryOverlayHasAHelmTwin keeps the variants table complete: a new overlay must say which
// Helm values render the same thing.
func TestEveryOverlayHasAHelmTwin(t *testing.T) {
	var have []string
	for _, v := range variants {
		have = append(have, v.overlay)
	}
	slices.Sort(have)
	if got := overlays(t); !slices.Equal(got, have) {
		t.Errorf("overlays %v, but the helm comparison table covers %v: add the new overlay to variants", got, have)
	}
}

func TestHelmLint(t *testing.T) {
	root := tools.RepoRoot(t)
	chart := filepath.Join(root, chartDir)
	for _, args := range [][]string{
		nil,
		{"--set", "serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboards.enabled=true"},
		{"--set", "dashboards.perses.enabled=true"},
		{"--set", "sharding.totalShards=3,replicaCount=1"},
		{"--set-json", `watch.namespaces=["a","b"]`},
		{"--set", "webConfig.secretName=web,webConfig.tls=true,webConfig.basicAuth=true,serviceMonitor.enabled=true"},
	} {
		full := append([]string{"lint", chart, "--strict", "--namespace", releaseNS}, args...)
		out := run(t, root, tools.HelmEnv(t), tools.Helm(t), full...)
		if !strings.Contains(string(out), "0 chart(s) failed") {
			t.Errorf("helm lint %v:\n%s", args, out)
		}
	}
}

// TestKustomizeRenders renders the base and every overlay, each on its own.
func TestKustomizeRenders(t *testing.T) {
	dirs := []string{kustomizeDir + "/base"}
	for _, o := range overlays(t) {
		dirs = append(dirs, kustomizeDir+"/overlays/"+o)
	}
	for _, d := range dirs {
		t.Run(filepath.Base(d), func(t *testing.T) {
			objs := renderKustomize(t, d)
			if len(objs) == 0 {
				t.Fatal("rendered nothing")
			}
			checkInvariants(t, objs, kustomizeNS)
		})
	}
}

// TestHelmRenders checks the chart's variants against the same invariants.
func TestHelmRenders(t *testing.T) {
	for _, v := range variants {
		t.Run(v.overlay, func(t *testing.T) {
			checkInvariants(t, renderHelm(t, v.helmArgs...), releaseNS)
		})
	}
}

// TestHelmMatchesKustomize renders each overlay and its Helm twin (release "lease-exporter" in
// namespace "monitoring", so names coincide) and requires the same objects with the same
// substance: everything but metadata labels and annotations must be equal (RBAC rules,
// security contexts, ports, probes, resources, selectors, NetworkPolicy, PDB,
// ServiceMonitor, PrometheusRule, dashboards), container args compared as a set. Labels:
// every label kustomize sets must be set by Helm too, with the same value.
func TestHelmMatchesKustomize(t *testing.T) {
	for _, v := range variants {
		t.Run(v.overlay, func(t *testing.T) {
			k := index(t, renderKustomize(t, kustomizeDir+"/overlays/"+v.overlay))
			h := index(t, renderHelm(t, v.helmArgs...))
			if kk, hk := keys(k), keys(h); !slices.Equal(kk, hk) {
				t.Fatalf("different objects:\n  kustomize: %v\n  helm:      %v", kk, hk)
			}
			for _, key := range keys(k) {
				ko, ho := k[key], h[key]
				for name, val := range ko.labels() {
					if got, ok := ho.labels()[name]; !ok || got != val {
						t.Errorf("%s: helm label %s = %q, kustomize %q", key, name, got, val)
					}
				}
				kt, ht := stringMap(ko.get("spec", "template", "metadata", "labels")), stringMap(ho.get("spec", "template", "metadata", "labels"))
				for name, val := range kt {
					if ht[name] != val {
						t.Errorf("%s: helm pod label %s = %q, kustomize %q", key, name, ht[name], val)
					}
				}
				if d := diff(key, substance(ko), substance(ho)); len(d) > 0 {
					t.Errorf("%s differs between kustomize and helm:\n    %s", key, strings.Join(d, "\n    "))
				}
			}
		})
	}
}

// substance drops what legitimately differs between the two renderings (labels and
// annotations, which Helm adds to) and orders container args, which may differ in order.
func substance(o object) object {
	c := object(deepCopy(map[string]any(o)).(map[string]any))
	md := asMap(c["metadata"])
	delete(md, "labels")
	delete(md, "annotations")
	if tmpl := asMap(c.get("spec", "template", "metadata")); tmpl != nil {
		delete(tmpl, "labels")
		delete(tmpl, "annotations")
	}
	for _, ctr := range list(c.get("spec", "template", "spec", "containers")) {
		cm := asMap(ctr)
		if args := list(cm["args"]); args != nil {
			sort.Slice(args, func(i, j int) bool { return fmt.Sprint(args[i]) < fmt.Sprint(args[j]) })
		}
	}
	return c
}

var leaseRule = []any{map[string]any{
	"apiGroups": []any{"coordination.k8s.io"},
	"resources": []any{"leases", "leasecandidates"},
	"verbs":     []any{"list", "watch"},
}}

// eventsRule is what --events adds to the lock-reading RBAC: writing Events, and listing
// them for the history's rebuild.
var eventsRule = map[string]any{"apiGroups": []any{"events.k8s.io"}, "resources": []any{"events"}, "verbs": []any{"create", "patch", "list"}}

// eventsEnabled reports whether the Deployments run with --events (all or none of them).
func eventsEnabled(deps []object) bool {
	for _, d := range deps {
		for _, ctr := range list(d.get("spec", "template", "spec", "containers")) {
			if slices.Contains(list(asMap(ctr)["args"]), any("--events")) {
				return true
			}
		}
	}
	return false
}

// checkEventsRBAC checks the Events writer's election RBAC and returns the other Roles and
// RoleBindings: with --events, exactly one Role and RoleBinding named after the --events.lock
// Lease, in ns, for the ServiceAccount, that may create Leases and get and update only the
// election's (one per shard); without, none.
func checkEventsRBAC(t *testing.T, roles, bindings, deps []object, events bool, sa, ns string) (otherRoles, otherBindings []object) {
	t.Helper()
	var lockName string
	var leases []any
	for _, d := range deps {
		shard := ""
		for _, ctr := range list(d.get("spec", "template", "spec", "containers")) {
			for _, a := range list(asMap(ctr)["args"]) {
				if v, ok := strings.CutPrefix(fmt.Sprint(a), "--events.lock="); ok {
					lockName = v
				}
				if v, ok := strings.CutPrefix(fmt.Sprint(a), "--shard="); ok {
					shard = "-shard-" + v
				}
			}
		}
		if events {
			_, name, _ := strings.Cut(lockName, "/")
			leases = append(leases, name+shard)
		}
	}
	want := map[string]any{}
	if events {
		lockNS, name, _ := strings.Cut(lockName, "/")
		if lockNS != "$(POD_NAMESPACE)" || name == "" {
			t.Errorf("--events.lock=%s, want a Lease in the Pod's own namespace, $(POD_NAMESPACE)/NAME", lockName)
		}
		podNamespace := map[string]any{"name": "POD_NAMESPACE", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.namespace"}}}
		for _, d := range deps {
			env := list(asMap(list(d.get("spec", "template", "spec", "containers"))[0])["env"])
			if !slices.ContainsFunc(env, func(e any) bool { return reflect.DeepEqual(e, podNamespace) }) {
				t.Errorf("%s: --events.lock names $(POD_NAMESPACE), but the container has no POD_NAMESPACE from metadata.namespace: %s", d.key(), compact(env))
			}
		}
		want = map[string]any{"Role/" + ns + "/" + name: []any{
			map[string]any{"apiGroups": []any{"coordination.k8s.io"}, "resources": []any{"leases"}, "verbs": []any{"create"}},
			map[string]any{"apiGroups": []any{"coordination.k8s.io"}, "resources": []any{"leases"}, "resourceNames": leases, "verbs": []any{"get", "update"}},
		}}
	}
	for _, r := range roles {
		if rules, ok := want[r.key()]; ok {
			if !reflect.DeepEqual(r.get("rules"), rules) {
				t.Errorf("%s rules = %s, want only %s (the Events writer's election)", r.key(), compact(r.get("rules")), compact(rules))
			}
			delete(want, r.key())
			continue
		}
		otherRoles = append(otherRoles, r)
	}
	for k := range want {
		t.Errorf("--events but no %s for the writer's election", k)
	}
	for _, b := range bindings {
		if events && strings.HasSuffix(b.name(), "-events") && b.namespace() == ns {
			wantSubjects := []any{map[string]any{"kind": "ServiceAccount", "name": sa, "namespace": ns}}
			if b.get("roleRef", "name") != b.name() || !reflect.DeepEqual(b.get("subjects"), wantSubjects) {
				t.Errorf("%s binds %s to %s, want its Role to the exporter's ServiceAccount", b.key(), compact(b.get("roleRef")), compact(b.get("subjects")))
			}
			continue
		}
		otherBindings = append(otherBindings, b)
	}
	return otherRoles, otherBindings
}

// lockRule is the RBAC rule of the lock kind whose resource --locks names, as informer's
// lock kinds table gives it.
func lockRule(resource string) any {
	k, ok := lock.KindOfResource(resource)
	if !ok {
		return "(no lock kind " + resource + ")"
	}
	r := k.RBACRule()
	var verbs []any
	for _, v := range r.Verbs {
		verbs = append(verbs, v)
	}
	return map[string]any{"apiGroups": []any{r.APIGroup}, "resources": []any{r.Resource}, "verbs": verbs}
}

// lockKinds returns the lock kinds besides Leases that the Deployments' --locks flags
// enable, in the order configmaps, endpoints; every Deployment must enable the same.
func lockKinds(deps []object) []string {
	var kinds []string
	for i, d := range deps {
		var these []string
		for _, ctr := range list(d.get("spec", "template", "spec", "containers")) {
			for _, a := range list(asMap(ctr)["args"]) {
				if v, ok := strings.CutPrefix(fmt.Sprint(a), "--locks="); ok {
					for _, k := range strings.Split(v, ",") {
						if k != "leases" && !slices.Contains(these, k) {
							these = append(these, k)
						}
					}
				}
			}
		}
		slices.Sort(these)
		if i > 0 && !slices.Equal(these, kinds) {
			return []string{"(Deployments differ in --locks)"}
		}
		kinds = these
	}
	return kinds
}

// matches reports whether a matchLabels selector selects labels.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false // an empty selector in our manifests would be a bug: it selects everything
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// checkInvariants asserts the properties every rendering must have, whatever tool made it.
func checkInvariants(t *testing.T, objs []object, ns string) {
	t.Helper()
	byKind := map[string][]object{}
	for _, o := range objs {
		byKind[o.kind()] = append(byKind[o.kind()], o)
	}

	// ServiceAccount: no token unless a pod asks.
	sas := byKind["ServiceAccount"]
	if len(sas) != 1 {
		t.Fatalf("want 1 ServiceAccount, got %d", len(sas))
	}
	sa := sas[0]
	if sa.namespace() != ns {
		t.Errorf("ServiceAccount in namespace %q, want %q", sa.namespace(), ns)
	}
	if sa.get("automountServiceAccountToken") != false {
		t.Errorf("ServiceAccount automountServiceAccountToken = %v, want false", sa.get("automountServiceAccountToken"))
	}

	// The Events writer's election Role (--events) is checked on its own (checkEventsRBAC);
	// the rest is the lock-reading RBAC.
	events := eventsEnabled(byKind["Deployment"])
	byKind["Role"], byKind["RoleBinding"] = checkEventsRBAC(t, byKind["Role"], byKind["RoleBinding"], byKind["Deployment"], events, sa.name(), ns)

	// RBAC: list+watch on leases and leasecandidates, nothing else, bound to that ServiceAccount only.
	roles := append(append([]object{}, byKind["ClusterRole"]...), byKind["Role"]...)
	if len(roles) == 0 {
		t.Fatal("no ClusterRole or Role")
	}
	if len(byKind["ClusterRole"]) > 0 && len(byKind["Role"]) > 0 {
		t.Error("both a ClusterRole and Roles: cluster-wide and namespaced RBAC are alternatives")
	}
	// Annotation locks add list+watch on their resource, exactly when a Deployment watches them.
	wantRules := slices.Clone(leaseRule)
	for _, kind := range lockKinds(byKind["Deployment"]) {
		wantRules = append(wantRules, lockRule(kind))
	}
	if events {
		wantRules = append(wantRules, eventsRule)
	}
	for _, r := range roles {
		if !reflect.DeepEqual(r.get("rules"), wantRules) {
			t.Errorf("%s rules = %s, want only %s (list+watch on leases and leasecandidates, and on the enabled annotation locks' resources; create, patch and list on events with --events)", r.key(), compact(r.get("rules")), compact(wantRules))
		}
	}
	bindings := append(append([]object{}, byKind["ClusterRoleBinding"]...), byKind["RoleBinding"]...)
	if len(bindings) != len(roles) {
		t.Errorf("%d roles but %d bindings", len(roles), len(bindings))
	}
	roleNS := map[string]bool{}
	for _, b := range bindings {
		wantKind := strings.TrimSuffix(b.kind(), "Binding")
		if b.get("roleRef", "kind") != wantKind || b.get("roleRef", "name") != b.name() {
			t.Errorf("%s roleRef = %s", b.key(), compact(b.get("roleRef")))
		}
		want := []any{map[string]any{"kind": "ServiceAccount", "name": sa.name(), "namespace": ns}}
		if !reflect.DeepEqual(b.get("subjects"), want) {
			t.Errorf("%s subjects = %s, want the exporter's ServiceAccount only", b.key(), compact(b.get("subjects")))
		}
		if b.kind() == "RoleBinding" {
			roleNS[b.namespace()] = true
		}
	}

	// Workloads.
	deps := byKind["Deployment"]
	if len(deps) == 0 {
		t.Fatal("no Deployment")
	}
	var podLabels []map[string]string
	shards := map[string]bool{}
	for _, d := range deps {
		if d.namespace() != ns {
			t.Errorf("%s not in namespace %s", d.key(), ns)
		}
		if d.get("spec", "replicas") != float64(2) {
			t.Errorf("%s replicas = %v, want 2 (HA)", d.key(), d.get("spec", "replicas"))
		}
		labels := stringMap(d.get("spec", "template", "metadata", "labels"))
		podLabels = append(podLabels, labels)
		if sel := stringMap(d.get("spec", "selector", "matchLabels")); !matches(sel, labels) {
			t.Errorf("%s selector %v does not select its pods %v", d.key(), sel, labels)
		}
		pod := object(asMap(d.get("spec", "template", "spec")))
		if pod.get("serviceAccountName") != sa.name() {
			t.Errorf("%s serviceAccountName = %v, want %s", d.key(), pod.get("serviceAccountName"), sa.name())
		}
		if pod.get("automountServiceAccountToken") != true {
			t.Errorf("%s pod automountServiceAccountToken = %v, want true", d.key(), pod.get("automountServiceAccountToken"))
		}
		checkRestricted(t, d.key(), pod)
		checkSpread(t, d.key(), pod, stringMap(d.get("spec", "selector", "matchLabels")))
		ctrs := list(pod.get("containers"))
		if len(ctrs) != 1 {
			t.Fatalf("%s has %d containers, want 1", d.key(), len(ctrs))
		}
		c := object(asMap(ctrs[0]))
		if img, _ := c.get("image").(string); !strings.HasPrefix(img, exporterImage+":") && !strings.HasPrefix(img, exporterImage+"@") {
			t.Errorf("%s image = %q", d.key(), img)
		}
		wantPorts := []any{map[string]any{"name": "http-metrics", "containerPort": float64(10047), "protocol": "TCP"}}
		if !reflect.DeepEqual(c.get("ports"), wantPorts) {
			t.Errorf("%s ports = %s", d.key(), compact(c.get("ports")))
		}
		for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
			if c.get(probe, "httpGet", "path") != path || c.get(probe, "httpGet", "port") != "http-metrics" {
				t.Errorf("%s %s = %s, want GET %s on http-metrics", d.key(), probe, compact(c.get(probe)), path)
			}
		}
		for _, r := range []string{"requests", "limits"} {
			for _, res := range []string{"cpu", "memory"} {
				if c.get("resources", r, res) == nil {
					t.Errorf("%s has no resources.%s.%s", d.key(), r, res)
				}
			}
		}
		args := map[string]string{}
		for _, a := range list(c.get("args")) {
			k, v, _ := strings.Cut(a.(string), "=")
			args[k] = v
		}
		if args["--web.listen-address"] != ":10047" {
			t.Errorf("%s --web.listen-address = %q, want :10047", d.key(), args["--web.listen-address"])
		}
		if len(byKind["Role"]) > 0 {
			var watched []string
			for n := range roleNS {
				watched = append(watched, n)
			}
			got := strings.Split(args["--namespaces"], ",")
			slices.Sort(got)
			slices.Sort(watched)
			if !slices.Equal(got, watched) {
				t.Errorf("%s --namespaces=%s, but Roles are granted in %v", d.key(), args["--namespaces"], watched)
			}
		} else if _, ok := args["--namespaces"]; ok {
			t.Errorf("%s watches --namespaces=%s with cluster-wide RBAC", d.key(), args["--namespaces"])
		}
		if s, ok := args["--shard"]; ok {
			if args["--total-shards"] != fmt.Sprint(len(deps)) {
				t.Errorf("%s --total-shards=%s, but %d Deployments", d.key(), args["--total-shards"], len(deps))
			}
			shards[s] = true
		}
	}
	if len(deps) > 1 {
		for i := range deps {
			if !shards[fmt.Sprint(i)] {
				t.Errorf("%d Deployments but none has --shard=%d (%v)", len(deps), i, shards)
			}
		}
		for i, d := range deps {
			for j := range deps {
				if i != j && matches(stringMap(d.get("spec", "selector", "matchLabels")), podLabels[j]) {
					t.Errorf("%s selects the pods of %s", d.key(), deps[j].key())
				}
			}
		}
	}

	// One PodDisruptionBudget per Deployment, minAvailable 1.
	pdbs := byKind["PodDisruptionBudget"]
	if len(pdbs) != len(deps) {
		t.Errorf("%d PodDisruptionBudgets for %d Deployments", len(pdbs), len(deps))
	}
	for i, d := range deps {
		n := 0
		for _, p := range pdbs {
			if matches(stringMap(p.get("spec", "selector", "matchLabels")), podLabels[i]) {
				n++
				if p.get("spec", "minAvailable") != float64(1) {
					t.Errorf("%s minAvailable = %v, want 1", p.key(), p.get("spec", "minAvailable"))
				}
			}
		}
		if n != 1 {
			t.Errorf("%s is covered by %d PodDisruptionBudgets, want 1", d.key(), n)
		}
	}

	// Service: port 10047 named http-metrics, selecting every exporter pod.
	svcs := byKind["Service"]
	if len(svcs) != 1 {
		t.Fatalf("want 1 Service, got %d", len(svcs))
	}
	svc := svcs[0]
	wantPorts := []any{map[string]any{"name": "http-metrics", "port": float64(10047), "targetPort": "http-metrics", "protocol": "TCP"}}
	if !reflect.DeepEqual(svc.get("spec", "ports"), wantPorts) {
		t.Errorf("Service ports = %s", compact(svc.get("spec", "ports")))
	}
	for i, l := range podLabels {
		if !matches(stringMap(svc.get("spec", "selector")), l) {
			t.Errorf("Service does not select the pods of %s", deps[i].key())
		}
	}

	// NetworkPolicy: ingress from Prometheus only, egress to the API server and DNS.
	nps := byKind["NetworkPolicy"]
	if len(nps) != 1 {
		t.Fatalf("want 1 NetworkPolicy, got %d", len(nps))
	}
	checkNetworkPolicy(t, nps[0], podLabels)

	// prometheus-operator objects, when present.
	for _, sm := range byKind["ServiceMonitor"] {
		if !matches(stringMap(sm.get("spec", "selector", "matchLabels")), svc.labels()) {
			t.Errorf("%s does not select the Service", sm.key())
		}
		eps := list(sm.get("spec", "endpoints"))
		if len(eps) != 1 || asMap(eps[0])["port"] != "http-metrics" || asMap(eps[0])["honorLabels"] != true {
			t.Errorf("%s endpoints = %s, want port http-metrics with honorLabels: true", sm.key(), compact(eps))
		}
		jobLabel, _ := sm.get("spec", "jobLabel").(string)
		if job := svc.labels()[jobLabel]; !regexp.MustCompile(`^.*lease-exporter.*$`).MatchString(job) {
			t.Errorf("%s: job would be %q (Service label %q), which the alerts' job=~\".*lease-exporter.*\" does not select", sm.key(), job, jobLabel)
		}
	}
	for _, pr := range byKind["PrometheusRule"] {
		want := generatedRule(t)
		if d := diff(pr.key()+".spec", want.get("spec"), pr.get("spec")); len(d) > 0 {
			t.Errorf("%s spec differs from the generated %s:\n    %s", pr.key(), generatedRulePath, strings.Join(d, "\n    "))
		}
	}
	if cms := byKind["ConfigMap"]; len(cms) > 0 {
		checkDashboards(t, cms)
	}
}

func checkRestricted(t *testing.T, key string, pod object) {
	t.Helper()
	for path, want := range map[string]any{
		"securityContext.runAsNonRoot":        true,
		"securityContext.runAsUser":           float64(65532),
		"securityContext.runAsGroup":          float64(65532),
		"securityContext.seccompProfile.type": "RuntimeDefault",
	} {
		if got := pod.get(strings.Split(path, ".")...); got != want {
			t.Errorf("%s pod %s = %v, want %v", key, path, got, want)
		}
	}
	for _, f := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if pod.get(f) == true {
			t.Errorf("%s pod sets %s", key, f)
		}
	}
	for _, v := range list(pod.get("volumes")) {
		if asMap(v)["hostPath"] != nil {
			t.Errorf("%s mounts a hostPath", key)
		}
	}
	for _, c := range list(pod.get("containers")) {
		sc := object(asMap(asMap(c)["securityContext"]))
		if sc.get("allowPrivilegeEscalation") != false || sc.get("readOnlyRootFilesystem") != true || sc.get("privileged") == true {
			t.Errorf("%s container securityContext = %s, want allowPrivilegeEscalation false, readOnlyRootFilesystem true", key, compact(sc))
		}
		if !reflect.DeepEqual(sc.get("capabilities"), map[string]any{"drop": []any{"ALL"}}) {
			t.Errorf("%s container capabilities = %s, want drop ALL and nothing added", key, compact(sc.get("capabilities")))
		}
	}
}

// checkSpread: replicas prefer different nodes and zones, but never refuse to schedule.
func checkSpread(t *testing.T, key string, pod object, selector map[string]string) {
	t.Helper()
	terms := list(pod.get("affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))
	if len(terms) == 0 || pod.get("affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution") != nil {
		t.Errorf("%s podAntiAffinity = %s, want preferred (soft) only", key, compact(pod.get("affinity", "podAntiAffinity")))
	}
	for _, term := range terms {
		sel := stringMap(object(asMap(term)).get("podAffinityTerm", "labelSelector", "matchLabels"))
		if !reflect.DeepEqual(sel, selector) || object(asMap(term)).get("podAffinityTerm", "topologyKey") != "kubernetes.io/hostname" {
			t.Errorf("%s anti-affinity term %s does not spread its own pods across hostnames", key, compact(term))
		}
	}
	tsc := list(pod.get("topologySpreadConstraints"))
	if len(tsc) == 0 {
		t.Errorf("%s has no topologySpreadConstraints", key)
	}
	for _, c := range tsc {
		if asMap(c)["whenUnsatisfiable"] != "ScheduleAnyway" {
			t.Errorf("%s topology spread %s is hard, want ScheduleAnyway", key, compact(c))
		}
	}
}

func checkNetworkPolicy(t *testing.T, np object, podLabels []map[string]string) {
	t.Helper()
	for _, l := range podLabels {
		if !matches(stringMap(np.get("spec", "podSelector", "matchLabels")), l) {
			t.Errorf("%s does not select exporter pods %v", np.key(), l)
		}
	}
	if !reflect.DeepEqual(np.get("spec", "policyTypes"), []any{"Ingress", "Egress"}) {
		t.Errorf("%s policyTypes = %s", np.key(), compact(np.get("spec", "policyTypes")))
	}
	ingress := list(np.get("spec", "ingress"))
	if len(ingress) != 1 {
		t.Fatalf("%s: want 1 ingress rule, got %s", np.key(), compact(ingress))
	}
	rule := object(asMap(ingress[0]))
	if !reflect.DeepEqual(rule.get("ports"), []any{map[string]any{"port": "http-metrics", "protocol": "TCP"}}) {
		t.Errorf("%s ingress ports = %s, want only http-metrics", np.key(), compact(rule.get("ports")))
	}
	from := list(rule.get("from"))
	if len(from) == 0 {
		t.Errorf("%s ingress has no `from`: it admits everyone", np.key())
	}
	for _, peer := range from {
		p := object(asMap(peer))
		if p.get("podSelector", "matchLabels", "app.kubernetes.io/name") != "prometheus" || p.get("namespaceSelector") == nil {
			t.Errorf("%s ingress peer %s, want namespaceSelector + podSelector app.kubernetes.io/name=prometheus", np.key(), compact(peer))
		}
	}
	// Egress: must allow exactly what the exporter needs; an empty list would deny all.
	open := map[string]bool{}
	for _, r := range list(np.get("spec", "egress")) {
		rm := object(asMap(r))
		if rm.get("to") != nil {
			t.Errorf("%s egress rule %s restricts destinations; the API server's address is cluster-specific", np.key(), compact(r))
		}
		for _, p := range list(rm.get("ports")) {
			open[fmt.Sprintf("%v/%v", asMap(p)["protocol"], asMap(p)["port"])] = true
		}
	}
	want := map[string]bool{"TCP/443": true, "TCP/6443": true, "UDP/53": true, "TCP/53": true}
	if !reflect.DeepEqual(open, want) {
		t.Errorf("%s egress opens %v, want %v", np.key(), keys(open), keys(want))
	}
}

const generatedRulePath = "deploy/kustomize/prometheus-operator/prometheusrule.yaml"

func generatedRule(t *testing.T) object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tools.RepoRoot(t), generatedRulePath))
	if err != nil {
		t.Fatalf("%v (render it with `make generate`)", err)
	}
	objs := decodeObjects(t, data)
	if len(objs) != 1 || objs[0].kind() != "PrometheusRule" {
		t.Fatalf("%s: want one PrometheusRule", generatedRulePath)
	}
	return objs[0]
}

// checkDashboards: one ConfigMap per dashboards/*.json, labelled for the Grafana sidecar,
// holding the file unchanged.
func checkDashboards(t *testing.T, cms []object) {
	t.Helper()
	root := tools.RepoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards/*.json (%v)", err)
	}
	got := map[string]string{}
	for _, cm := range cms {
		if cm.labels()["grafana_dashboard"] != "1" {
			t.Errorf("%s lacks the label grafana_dashboard: \"1\"", cm.key())
		}
		data := stringMap(cm.get("data"))
		if len(data) != 1 {
			t.Errorf("%s has %d keys, want one dashboard", cm.key(), len(data))
		}
		for k, v := range data {
			got[k] = v
		}
	}
	var want []string
	for _, f := range files {
		name := filepath.Base(f)
		want = append(want, name)
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := got[name]; !ok {
			t.Errorf("no ConfigMap holds dashboard %s", name)
		} else if v != string(src) {
			t.Errorf("the ConfigMap of %s differs from dashboards/%s (run make generate)", name, name)
		}
	}
	if have := keys(got); !slices.Equal(have, want) {
		t.Errorf("dashboard ConfigMaps hold %v, dashboards/ has %v", have, want)
	}
}

// docExamples are the kustomizations docs/deploy.md shows, under testdata/kustomize, with the
// namespace the exporter must end up in.
var docExamples = map[string]string{
	"namespaced-prometheus-operator": kustomizeNS,
	"other-namespace":                "observability",
	"kube-prometheus-stack":          kustomizeNS,
}

// TestKustomizeDocExamples renders the examples of docs/deploy.md: they must keep working
// and keep every invariant (in particular the RoleBinding subjects follow a namespace change).
func TestKustomizeDocExamples(t *testing.T) {
	for _, name := range keys(docExamples) {
		t.Run(name, func(t *testing.T) {
			objs := renderKustomize(t, "test/deploy/testdata/kustomize/"+name)
			checkInvariants(t, objs, docExamples[name])
			for _, o := range objs {
				if ns := o.namespace(); ns != "" && ns != docExamples[name] && o.kind() != "Role" && o.kind() != "RoleBinding" {
					t.Errorf("%s is in namespace %q, want %q", o.key(), ns, docExamples[name])
				}
			}
			switch name {
			case "kube-prometheus-stack":
				for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
					for _, o := range ofKind(objs, kind) {
						if o.labels()["release"] != "kube-prometheus-stack" {
							t.Errorf("%s lacks the release label", o.key())
						}
					}
				}
			case "namespaced-prometheus-operator":
				if img := containerOf(t, deploymentOf(t, objs)).get("image"); img != exporterImage+":v1.2.3" {
					t.Errorf("image = %v, want the overlay's tag", img)
				}
			}
		})
	}
}
