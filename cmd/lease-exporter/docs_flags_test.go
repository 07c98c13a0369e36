package main

import (
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// otherToolsFlags are the flags the docs name for commands other than the exporter and the
// plugin (kubectl, helm, docker, git, the control plane's binaries, ...), each with the
// command it belongs to. A flag of ours must never be added here: a removed one would then
// pass as someone else's.
var otherToolsFlags = map[string]string{
	"set": "helm", "install": "helm upgrade", "create-namespace": "helm",
	"wait": "helm install", "server-side": "kubectl apply", "from-file": "kubectl create",
	"raw": "kubectl get", "previous": "kubectl logs", "for": "kubectl events",
	"type": "kubectl patch", "list": "kubectl auth can-i", "image": "kubectl debug",
	"grace-period": "kubectl delete", "force": "kubectl delete",
	"show-labels": "kubectl get", "field-selector": "kubectl get", "sort-by": "kubectl get",
	"manifest": "kubectl krew install", "archive": "kubectl krew install",
	"build-arg": "docker build", "platform": "docker build", "pull": "docker build",
	"network": "docker run", "tags": "git describe", "always": "git describe",
	"dirty": "git describe", "abbrev-ref": "git rev-parse", "help": "every command",
	"feature-gates": "kube-apiserver", "runtime-config": "kube-apiserver",
	"event-ttl": "kube-apiserver", "shutdown-send-retry-after": "kube-apiserver",
	"shutdown-watch-termination-grace-period": "kube-apiserver",
	"leader-elect-retry-period":               "kube-scheduler, kube-controller-manager",
	"leader-elect-resource-name":              "kube-scheduler, kube-controller-manager",
	"leader-elect-resource-namespace":         "kube-scheduler, kube-controller-manager",
	"resources":                               "kube-state-metrics", "query.replica-label": "thanos query",
	"plugin.path": "percli lint", "selftest": "hack/govulncheck.sh",
	"reuse-values": "helm upgrade", "reset-then-reuse-values": "helm upgrade",
	"certificate-identity": "cosign verify", "certificate-oidc-issuer": "cosign verify",
	"bundle": "cosign verify-blob", "check": "sha256sum", "ignore-missing": "sha256sum",
	"strict": "helm lint",
}

// removedFlags are flags the exporter no longer has, each allowed in the one doc that records
// its removal (the metric contract's history), nowhere else.
var removedFlags = map[string]string{"node-leases": "docs/metrics.md"}

// docFlag is a `--name` where a command line could hold one: not inside an anchor such as
// #the-default-set-and---metricsextended.
var docFlag = regexp.MustCompile("(?:^|[\\s`(\\[|,'\"=])--([a-z][a-z0-9.-]*[a-z0-9])")

// TestDocsNameOnlyFlagsThatExist: every --flag in README.md and docs/ (runbooks included) is
// one the exporter or kubectl lease has, or another tool's from the list above, so a doc that
// still tells an operator to use a removed or renamed flag fails here.
func TestDocsNameOnlyFlagsThatExist(t *testing.T) {
	known := map[string]string{}
	exporter := flag.NewFlagSet("lease-exporter", flag.ContinueOnError)
	exporter.SetOutput(io.Discard)
	(&options{}).AddFlags(exporter)
	exporter.VisitAll(func(f *flag.Flag) { known[f.Name] = "lease-exporter" })
	// kubectl lease: kubectl's own flags, and its own as docs/kubectl-plugin.md's flag table
	// lists them (cmd/kubectl-lease's docs test holds that table to the plugin's flag set).
	kubectl := pflag.NewFlagSet("kubectl", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(kubectl)
	kubectl.VisitAll(func(f *pflag.Flag) { known[f.Name] = "kubectl" })
	plugin, err := os.ReadFile("../../docs/kubectl-plugin.md")
	if err != nil {
		t.Fatal(err)
	}
	pluginFlags := 0
	for line := range strings.Lines(string(plugin)) {
		if cells := strings.Split(line, "|"); len(cells) > 2 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`-") {
			for _, m := range docFlag.FindAllStringSubmatch(cells[1], -1) {
				known[m[1]] = "kubectl lease"
				pluginFlags++
			}
		}
	}
	if pluginFlags < 8 {
		t.Fatalf("found only %d flags in docs/kubectl-plugin.md's flag table", pluginFlags)
	}
	for name, tool := range otherToolsFlags {
		if owner, ok := known[name]; ok {
			t.Errorf("--%s is listed as %s's, but %s has it too: take it off the list", name, tool, owner)
		}
	}

	files := []string{"../../README.md"}
	err = filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.TrimPrefix(path, "../../")
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range docFlag.FindAllStringSubmatch(line, -1) {
				name := m[1]
				checked++
				if _, ok := known[name]; ok {
					continue
				}
				if _, ok := otherToolsFlags[name]; ok {
					continue
				}
				if removedFlags[name] == doc {
					continue
				}
				t.Errorf("%s:%d names --%s, which neither lease-exporter nor kubectl lease has (nor is it another tool's flag listed in this test)", doc, i+1, name)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("found only %d --flags in %d docs: is the pattern broken?", checked, len(files))
	}
}
