package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

// docs/kubectl-plugin.md documents every flag the plugin adds to kubectl's own and every
// column the table can print: a flag or column added without a word there fails here.
func TestDocsDescribeEveryFlagAndColumn(t *testing.T) {
	b, err := os.ReadFile("../../docs/kubectl-plugin.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	kubectls := pflag.NewFlagSet("kubectl", pflag.ContinueOnError)
	newOptions(genericiooptions.IOStreams{}).config.AddFlags(kubectls)
	root := newRootCommand(genericiooptions.IOStreams{})
	seen := map[string]bool{}
	check := func(f *pflag.Flag) {
		if kubectls.Lookup(f.Name) != nil || seen[f.Name] || f.Name == "help" || f.Name == "version" {
			return
		}
		seen[f.Name] = true
		if !strings.Contains(doc, "`--"+f.Name+"`") {
			t.Errorf("flag --%s is not in docs/kubectl-plugin.md's flag table", f.Name)
		}
	}
	root.Flags().VisitAll(check)
	root.PersistentFlags().VisitAll(check)
	if len(seen) < 8 {
		t.Fatalf("found only %d plugin flags", len(seen))
	}
	// And the other way: every flag in the flag table's rows is one the plugin or kubectl has,
	// so a removed or renamed flag cannot stay documented.
	tableFlag := regexp.MustCompile("`--([a-z][a-z0-9.-]*)`")
	for line := range strings.Lines(doc) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`-") {
			continue
		}
		for _, m := range tableFlag.FindAllStringSubmatch(cells[1], -1) {
			if !seen[m[1]] && kubectls.Lookup(m[1]) == nil && !hasFlag(root, m[1]) {
				t.Errorf("docs/kubectl-plugin.md's flag table documents --%s, which kubectl lease does not have", m[1])
			}
		}
	}
	// The column table's rows: "| NAME, KIND | ..." (captures of the output do not count).
	documented := map[string]bool{}
	for line := range strings.Lines(doc) {
		if cells := strings.Split(line, "|"); len(cells) > 2 && strings.HasPrefix(line, "| ") {
			for _, name := range strings.Split(cells[1], ",") {
				documented[strings.TrimSpace(name)] = true
			}
		}
	}
	for _, c := range append(columnsFor(true, true), listColumns...) {
		if !documented[strings.ToUpper(c.Name)] {
			t.Errorf("column %s has no row in docs/kubectl-plugin.md's column table", strings.ToUpper(c.Name))
		}
	}
}

// The shipped NetworkPolicy admits the exporter's port only from Prometheus Pods, so the API
// server's service proxy cannot connect wherever NetworkPolicy is enforced: --exporter-service
// port-forwards instead (the kubelet connects inside the Pod). Whatever says how to reach the
// exporter must say it is a port-forward, and nothing may send the user through the proxy.
func TestDocsSayExporterServicePortForwardsPastTheNetworkPolicy(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kustomize/base/common/networkpolicy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var np networkingv1.NetworkPolicy
	if err := yaml.UnmarshalStrict(b, &np); err != nil {
		t.Fatal(err)
	}
	admitsAPIServer := !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
	for _, rule := range np.Spec.Ingress {
		for _, peer := range rule.From {
			admitsAPIServer = admitsAPIServer || peer.IPBlock != nil
		}
		admitsAPIServer = admitsAPIServer || len(rule.From) == 0
	}
	if admitsAPIServer {
		t.Fatal("the shipped NetworkPolicy now admits the API server: the docs say only a port-forward gets past it; rewrite them and this test")
	}
	plugin, err := os.ReadFile("../../docs/kubectl-plugin.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	o := newOptions(genericiooptions.IOStreams{})
	fs := pflag.NewFlagSet("plugin", pflag.ContinueOnError)
	o.addCommonFlags(fs)
	help := fs.Lookup("exporter-service").Usage
	for name, text := range map[string]string{"docs/kubectl-plugin.md": string(plugin), "README.md": string(readme), "--exporter-service's help": help} {
		if strings.Contains(text, "services/proxy") || strings.Contains(text, "through the API server's proxy") {
			t.Errorf("%s sends the user through the API server's service proxy, which the NetworkPolicy blocks", name)
		}
	}
	_, bullet, _ := strings.Cut(string(plugin), "- `--exporter-service NAMESPACE/NAME[:PORT]`")
	bullet, _, _ = strings.Cut(bullet, "\n\n")
	for _, want := range []string{"NetworkPolicy", "port-forward", "pods/portforward"} {
		if !strings.Contains(bullet, want) || !strings.Contains(help, want) {
			t.Errorf("docs/kubectl-plugin.md's --exporter-service paragraph or the flag's help does not mention %s:\n%s\n%s", want, bullet, help)
		}
	}
}

// hasFlag reports whether c or any of its subcommands defines the flag name.
func hasFlag(c *cobra.Command, name string) bool {
	if c.Flags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil {
		return true
	}
	for _, sub := range c.Commands() {
		if hasFlag(sub, name) {
			return true
		}
	}
	return false
}
