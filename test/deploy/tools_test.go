// Package deploy_test checks what ships to clusters: the Dockerfile and hack/build.sh, the
// kustomize tree under deploy/kustomize and the Helm chart under deploy/helm; and the GitHub
// workflows that test and publish them (.github/workflows). The static tests need helm and
// actionlint (hack/tools/build.sh), shellcheck and kubectl (from KUBEBUILDER_ASSETS, filled by
// hack/kube-binaries/build.sh) and FAIL, never skip, without them; the apiserver tests also
// start a real etcd + kube-apiserver from KUBEBUILDER_ASSETS.
//
//	export KUBEBUILDER_ASSETS=$(hack/kube-binaries/build.sh | tail -1)
//	hack/tools/build.sh
//	go test ./test/deploy/
package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// object is one rendered Kubernetes object, decoded the way the API server's JSON decoder
// sees it (numbers are float64).
type object map[string]any

func (o object) kind() string      { s, _ := o["kind"].(string); return s }
func (o object) name() string      { s, _ := o.get("metadata", "name").(string); return s }
func (o object) namespace() string { s, _ := o.get("metadata", "namespace").(string); return s }
func (o object) key() string       { return o.kind() + "/" + o.namespace() + "/" + o.name() }

// get walks maps by key and lists by decimal index; nil when the path does not exist.
func (o object) get(path ...string) any {
	var cur any = map[string]any(o)
	for _, p := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			var i int
			if _, err := fmt.Sscanf(p, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func (o object) labels() map[string]string { return stringMap(o.get("metadata", "labels")) }

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out
}

func list(v any) []any { l, _ := v.([]any); return l }

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func toJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// decodeObjects splits a multi-document YAML stream into objects, dropping empty documents.
func decodeObjects(t testing.TB, data []byte) []object {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []object
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decode rendered manifests: %v", err)
		}
		if len(o) == 0 {
			continue
		}
		objs = append(objs, o)
	}
	return objs
}

// index maps kind/namespace/name to the object and fails on duplicates.
func index(t testing.TB, objs []object) map[string]object {
	t.Helper()
	m := make(map[string]object, len(objs))
	for _, o := range objs {
		if _, dup := m[o.key()]; dup {
			t.Fatalf("object %s rendered twice", o.key())
		}
		m[o.key()] = o
	}
	return m
}

func ofKind(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o.kind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// diff lists the paths at which a and b differ, for readable failures.
func diff(path string, a, b any) []string {
	if o, ok := a.(object); ok {
		a = map[string]any(o)
	}
	if o, ok := b.(object); ok {
		b = map[string]any(o)
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		var out []string
		all := map[string]bool{}
		for k := range av {
			all[k] = true
		}
		for k := range bv {
			all[k] = true
		}
		for _, k := range keys(all) {
			out = append(out, diff(path+"."+k, av[k], bv[k])...)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		var out []string
		for i := range av {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{fmt.Sprintf("%s:\n      kustomize: %s\n      helm:      %s", path, compact(a), compact(b))}
}

func compact(v any) string {
	if v == nil {
		return "<absent>"
	}
	b, _ := json.Marshal(v)
	if len(b) > 400 {
		return string(b[:400]) + "..."
	}
	return string(b)
}

// run executes a command and returns stdout; a failure fails the test with stderr.
func run(t testing.TB, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

func runErr(dir string, env []string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

const (
	chartDir      = "deploy/helm/lease-exporter"
	kustomizeDir  = "deploy/kustomize"
	releaseName   = "lease-exporter"
	releaseNS     = "monitoring"
	kustomizeNS   = "monitoring"
	exporterImage = "ghcr.io/lease-exporter/lease-exporter"
)

// renderKustomize runs `kubectl kustomize` on a directory relative to the repository root.
func renderKustomize(t testing.TB, dir string) []object {
	t.Helper()
	root := tools.RepoRoot(t)
	out := run(t, root, nil, tools.Kubectl(t), "kustomize", filepath.Join(root, dir))
	return decodeObjects(t, out)
}

// renderHelm runs `helm template` of the chart as release lease-exporter in namespace
// monitoring, with extra arguments (--set ...).
func renderHelm(t testing.TB, args ...string) []object {
	t.Helper()
	out, err := renderHelmErr(t, args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return decodeObjects(t, out)
}

func renderHelmErr(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	root := tools.RepoRoot(t)
	full := append([]string{"template", releaseName, filepath.Join(root, chartDir), "--namespace", releaseNS}, args...)
	return runErr(root, tools.HelmEnv(t), tools.Helm(t), full...)
}

// overlays lists deploy/kustomize/overlays/*, so a new overlay is rendered and checked
// without touching the tests.
func overlays(t testing.TB) []string {
	t.Helper()
	root := tools.RepoRoot(t)
	matches, err := filepath.Glob(filepath.Join(root, kustomizeDir, "overlays", "*", "kustomization.yaml"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no overlays under %s/overlays (%v)", kustomizeDir, err)
	}
	var out []string
	for _, m := range matches {
		out = append(out, filepath.Base(filepath.Dir(m)))
	}
	slices.Sort(out)
	return out
}
