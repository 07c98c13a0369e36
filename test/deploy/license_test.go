package deploy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// licenseSPDX is the project's license as SPDX names it: the LICENSE file's text, and what the
// image label and the chart's metadata declare.
const licenseSPDX = "Apache-2.0"

// TestLicenseIsApache2Everywhere: LICENSE at the root is the Apache License 2.0 text, and the
// chart declares the same license where chart indexes read it (the image label is checked by
// TestDockerfile, the archives by hack/krew's checkArchive).
func TestLicenseIsApache2Everywhere(t *testing.T) {
	root := tools.RepoRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(strings.Fields(string(text[:min(len(text), 200)])), " ")
	if !strings.HasPrefix(head, "Apache License Version 2.0, January 2004 http://www.apache.org/licenses/") {
		t.Errorf("LICENSE does not start as the Apache License 2.0 does: %q", head)
	}
	if !strings.Contains(string(text), "END OF TERMS AND CONDITIONS") {
		t.Error("LICENSE is cut short: no END OF TERMS AND CONDITIONS")
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "helm", "lease-exporter", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Annotations map[string]string `yaml:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		t.Fatal(err)
	}
	if got := chart.Annotations["artifacthub.io/license"]; got != licenseSPDX {
		t.Errorf("Chart.yaml's artifacthub.io/license annotation = %q, want %q", got, licenseSPDX)
	}
}
