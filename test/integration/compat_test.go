package integration_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/compatibility.md is a tested claim: its table lists exactly the Kubernetes versions
// pinned in hack/kube-binaries, each with the pinned etcd; `make test` runs the integration
// suite on 1.36 and `make test-release` on the others; and this run is on one of them, with that etcd.
func TestCompatibilityTable(t *testing.T) {
	doc := read(t, "../../docs/compatibility.md")
	rows := regexp.MustCompile(`(?m)^\| (\d+\.\d+\.\d+) \| (\d+\.\d+\.\d+) \|`).FindAllStringSubmatch(doc, -1)
	table := map[string]string{} // Kubernetes version -> etcd version
	for _, r := range rows {
		table[r[1]] = r[2]
	}

	etcdPin := pinned(t, "../../hack/kube-binaries/etcd/go.mod", "go.etcd.io/etcd/server/v3")
	mods, err := filepath.Glob("../../hack/kube-binaries/k8s-*/go.mod")
	if err != nil || len(mods) == 0 {
		t.Fatalf("no hack/kube-binaries/k8s-*/go.mod: %v", err)
	}
	var minors []string
	for _, mod := range mods {
		v := pinned(t, mod, "k8s.io/kubernetes")
		minors = append(minors, v[:strings.LastIndexByte(v, '.')])
		switch etcd, ok := table[v]; {
		case !ok:
			t.Errorf("docs/compatibility.md's table lacks Kubernetes %s, pinned in %s", v, mod)
		case etcd != etcdPin:
			t.Errorf("docs/compatibility.md: Kubernetes %s with etcd %s, but etcd %s is pinned", v, etcd, etcdPin)
		}
	}
	if len(table) != len(mods) {
		t.Errorf("docs/compatibility.md's table lists %d versions, hack/kube-binaries pins %d", len(table), len(mods))
	}

	// The Makefile runs the suite on each pinned minor besides the default 1.36.
	m := regexp.MustCompile(`(?m)^KUBE_MATRIX := (.*)$`).FindStringSubmatch(read(t, "../../Makefile"))
	if m == nil {
		t.Fatal("Makefile has no KUBE_MATRIX")
	}
	matrix := append(strings.Fields(m[1]), "1.36")
	slices.Sort(matrix)
	slices.Sort(minors)
	if !slices.Equal(matrix, minors) {
		t.Errorf("Makefile's KUBE_MATRIX plus 1.36 is %v, hack/kube-binaries pins %v", matrix, minors)
	}

	if _, ok := table[strings.TrimPrefix(env.version, "v")]; !ok {
		t.Errorf("this run's kube-apiserver %s is not in docs/compatibility.md's table", env.version)
	}
	if got := env.CP.EtcdVersion(); got != strings.TrimPrefix(etcdPin, "v") {
		t.Errorf("this run's etcd is %s, hack/kube-binaries/etcd pins %s", got, etcdPin)
	}
}

// pinned returns the version go.mod requires of module, without the leading v.
func pinned(t *testing.T, gomod, module string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + ` v(\S+)`).FindStringSubmatch(read(t, gomod))
	if m == nil {
		t.Fatalf("%s does not require %s", gomod, module)
	}
	return m[1]
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
